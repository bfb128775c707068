"""The salience weights, as fitted by `python -m bench.fit_salience --write` (do not edit:
re-run the fit). Log-odds per feature of `gitdream.dream.salience.FEATURES`; the bias; the
default threshold (a probability).

Fitted on 1239 labelled entries of ../shared/quality/labels.jsonl that reach the engine;
l2 = 1024.0 (held-out log-loss), threshold = 0.35 (held-out F1).
fitted on Kit's daily logs (777 entries, 78 keep): training precision 0.79, recall 0.69; held out on
BookMinder's diary and the Claude Code transcripts (462, 77 keep): precision 0.80, recall 0.56.
fitted on BookMinder's diary and the Claude Code transcripts (462 entries, 77 keep): training
precision 0.80, recall 0.56; held out on Kit's daily logs (777, 78 keep): precision 0.79, recall
0.69.
fitted on all (1239 entries, 155 keep): precision 0.80, recall 0.63, 122 kept.
"""

from __future__ import annotations

BIAS = -1.71
THRESHOLD = 0.35
L2 = 1024.0
WEIGHTS: dict[str, float] = {
    "lesson-heading": 1.94,
    "lesson-heading-weak": 0.97,
    "lesson-label": 1.93,
    "lesson-label-weak": 0.97,
    "lead-in": 0.00,
    "lead-in-lesson": 0.97,
    "lead-in-plan": -0.97,
    "lead-in-status": -0.97,
    "artifact-heading": 0.97,
    "alert-heading": 0.97,
    "plan-heading": -1.94,
    "status-label": -0.97,
    "event-heading": -1.94,
    "reading": -1.94,
    "tagged": 3.87,
    "keep-cue": 3.87,
    "skip-cue": -3.87,
    "user": 0.00,
    "user-statement": 0.97,
    "assistant": -0.00,
    "output": -3.87,
    "tool-output": -1.93,
    "narration": -1.94,
    "narration-weak": -0.97,
    "question": -1.93,
    "fragment": -0.97,
    "short": -0.97,
    "recount": -0.97,
    "deictic": -0.97,
    "expectation": -3.87,
    "acknowledgement": -1.94,
    "session-request": -2.90,
    "rule": 1.93,
    "rule-weak": 0.97,
    "reason": 0.97,
    "procedure": 0.97,
    "correction": 1.93,
    "limit": 1.94,
    "preference": 1.94,
    "definition": 1.94,
    "definition-weak": 0.97,
    "reference": 1.94,
    "path": 0.49,
    "generic": 0.97,
    "contrast": 0.97,
    "behaviour": 0.97,
    "present": 0.48,
    "emphasis": 0.97,
    "status": -1.94,
    "momentary": -1.94,
    "counts": -1.94,
    "clock": -0.97,
    "time-bound": -2.90,
    "date": -0.97,
    "status-mark": -0.97,
    "id": -0.97,
    "activity": -1.94,
    "decision": 1.94,
    "speculation": -1.94,
    "past": -0.48,
    "first-person": -0.48,
    "plan": -3.87,
}
