r"""Salience: which raw entries carry durable knowledge (and become facts) and which do not.

The offline engine cannot rewrite text the way a model does; it chooses. Each raw entry gets
a **score**, the sum of the weights of the *cues* it shows; an entry at or above the
threshold (`offline.salience_threshold`, default `DEFAULT_THRESHOLD`) may become a fact,
an entry below it is *read and not kept*, counted in the receipt under the reason of its
strongest negative cue (status, activity, plan, narration, output, question), or "not
durable" when nothing speaks for it.

What speaks **for** an entry (a month later, would the agent act better for knowing it?):

- `lesson-heading` / `lesson-label`: it stands under a heading, or opens with a bold or
  colon label, that names durable knowledge in any of the languages the cue lists hold
  (Lessons, Learned, Rules, Decisions, Notes, Gotchas, 교훈, 결정, 규칙, 教训, 决定, 経験,
  教訓, 決定, 注意 …);
- `rule`: modal or imperative form — a rule, a limit, an instruction (must, never, always,
  do not, avoid, 必须, 不要, 반드시, 하지 마, 必ず, しないこと …);
- `reason`: it gives a reason, a purpose or a consequence (because, so that, to prevent,
  root cause, 因为, 때문에, ため …);
- `procedure`: a modal or rule together with an order of steps (before, after, first,
  whenever, 之前, 전에, 前に …): how something is done;
- `correction`: a before→after correction, or a belief corrected (not X but Y, turns out,
  no longer, ≠/→ between two states, 不是…而是, 아니라, ではなく …);
- `limit`: a number with a limit word (280-character limit, 30-minute cooldown, at most 5);
- `preference`: an owner's standing preference or instruction — a user's message (or a
  quoted `> ` line of a diary) that says what they prefer, dislike or want kept;
- `definition`: it defines a named thing — `` `tool.py` — what it does ``, "X is a Y",
  "X lives at path";
- `reference`: a labelled value — an endpoint, a path, a command, an address
  (`Auth: \`Bearer KEY\``, `Sandbox: https://…`);
- `emphasis`: a word in capitals for stress (NEVER, EXTENDS);
- `tagged`: the entry carries an explicit tag (`[deploy]`, `#ops`): the agent filed it under
  a subject itself.

What speaks **against** it:

- `status`: a snapshot — counts of things ("11 matches, 0 unread"), "no new", "still",
  "remaining", "until 12:24" (status words, several numbers, clock times);
- `activity`: a one-off record of something done (replied, posted, sent, 했다, 已…了,
  しました), often with an opaque id of the post or message;
- `plan`: a plan or a to-do (next, TODO, will, need to, `[ ]`, 계획, 下一步, 予定);
- `narration`: an assistant narrating its own work (Let me …, I'll …, 让我, 하겠습니다,
  します);
- `output`: terminal or UI output, a file tree, a test summary, code;
- `question`: a question (it asks, it does not tell);
- `event-heading`: under a heading that is an event or a tally (a clock time, a count such
  as "Writes (3)", a status or activity heading);
- `reading`: notes from reading — under a research or reading heading, or citing a paper
  ("(Wartel et al. 2021)"): what others found, not what the agent learned about its own
  tools, people and work.

Words inside quotations ("…", “…”, 「…」) are someone else's: they state no rule, reason or
correction of the agent's own. A strong lesson word (Lessons, Rules, Decisions, 교훈, 教训)
weighs fully; a weak one (Notes, Setup, Tools, 메모, 备忘) half.

Repetition across days — the same statement (same numbers) on two or more days, or already
a fact in memory — is what keeps being true; it ranks an entry higher among those above the
bar (`REPEATED_BONUS`, applied by the engine) but never lifts one over it: a verdict depends
on the entry alone, so material read again (a pending entry, `--full`) is judged the same.

Structure carries across languages — headings, labels, list ordinals, ids, numbers, code,
questions, repetition across days — and the word cues are lists per language, so no rule
rests on English words alone. The cue lists and the threshold are configurable
(`offline.keep_cues`, `offline.skip_cues`, `offline.salience_threshold`); the weights are
constants below. Defaults were set on real agent logs (an English social-agent daily log and
an English developer diary) and checked on material of other agents, never on entry ids.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field

from gitdream.units import Entry

DEFAULT_THRESHOLD = 1.5
"""An entry scoring at or above this may become a fact (`offline.salience_threshold`)."""
REPEATED_BONUS = 1.5
"""Added to the rank (not the verdict) of an entry whose statement repeats across days."""

WEIGHTS: dict[str, float] = {
    "lesson-heading": 2.0,
    "lesson-label": 2.5,
    "rule": 2.0,
    "reason": 1.0,
    "procedure": 0.75,
    "correction": 1.5,
    "limit": 1.5,
    "preference": 2.0,
    "definition": 2.0,
    "emphasis": 1.0,
    "reference": 1.5,
    "keep-cue": 2.0,
    "tagged": 2.0,
    "status": -2.0,
    "counts": -1.5,
    "clock": -1.0,
    "activity": -2.0,
    "id": -1.0,
    "plan": -2.0,
    "narration": -3.0,
    "output": -4.0,
    "question": -2.5,
    "fragment": -1.5,
    "event-heading": -1.0,
    "reading": -1.0,
    "skip-cue": -2.0,
}
"""Weight of each cue (module docstring)."""

REASONS = {
    "status": "status snapshot",
    "counts": "status snapshot",
    "clock": "status snapshot",
    "activity": "activity record",
    "id": "activity record",
    "event-heading": "activity record",
    "reading": "reading notes",
    "plan": "plan or to-do",
    "narration": "narration",
    "output": "terminal or UI output",
    "question": "a question",
    "fragment": "fragment",
    "skip-cue": "skip cue",
}
"""Reason (receipt key, after "not kept: ") of each negative cue."""
NOT_DURABLE = "nothing durable"


def _words(*groups: str) -> tuple[str, ...]:
    return tuple(w for g in groups for w in g.split("|") if w)


# --- cue lexicons, per language (English | Chinese | Korean | Japanese) ----------------------
# Latin words match whole words (case-insensitive); CJK ones match as substrings.

STRONG_LESSON_WORDS = _words(
    "lesson|lessons|learned|learnt|learning|learnings|takeaway|takeaways|rule|rules|"
    "decision|decisions|decided|gotcha|gotchas|caveat|caveats|pitfall|pitfalls|"
    "insight|insights|finding|findings|key finding|important|warning|remember|principle|"
    "principles|guideline|guidelines|convention|conventions|policy|constraint|constraints|"
    "limitation|limitations|root cause|workaround|how to|howto|faq|preference|preferences|"
    "feedback|correction|corrections|known issue|known issues|requirements|requirement|"
    "specification|best practices|instructions|standing orders|directive|directives|"
    "style guide|quirks|problem solving",
    "教训|经验|心得|决定|决策|规则|规范|注意事项|要点|结论|发现|原则|约定|限制|坑|偏好|反馈|更正|"
    "纠正|需求|最佳实践|指令",
    "교훈|배운 점|배운점|결정|규칙|주의사항|원칙|규약|제약|제한|발견|결론|선호|피드백|정정|교정|"
    "요구사항|모범 사례|지침|지시",
    "教訓|学び|決定|方針|ルール|規則|注意点|要点|結論|知見|発見|原則|規約|制約|制限|好み|"
    "フィードバック|訂正|要件|ベストプラクティス|指示",
)
WEAK_LESSON_WORDS = _words(
    "note|notes|tip|tips|fix|reference|setup|configuration|config|usage|commands|tools|"
    "environment|glossary|contacts|people|overview|about|api|limits|key concepts|"
    "technical concepts|concepts|definitions|practices|design|architecture|style|spec|owner",
    "注意|技巧|原因|解决|备忘|架构|设计|配置|用法|命令|工具|环境|术语|联系人|概述|说明",
    "주의|메모|팁|원인|해결|참고|구조|설계|설정|사용법|명령어|도구|환경|용어|연락처|개요",
    "注意|コツ|原因|解決|メモ|備忘|構成|設計|設定|使い方|コマンド|ツール|環境|用語|連絡先|概要",
)
LESSON_WORDS = STRONG_LESSON_WORDS + WEAK_LESSON_WORDS
READING_WORDS = _words(
    "research|reading|read|paper|papers|study|studies|literature|non-agent research|article|articles",
    "研究|论文|阅读|文献",
    "연구|논문|독서|문헌",
    "研究|論文|読書|文献",
)
STATUS_HEADING_WORDS = _words(
    "status|checks|check|platform checks|writes|writing|actions|activity|likes|replies|"
    "engagement|progress|done|completed|changelog|stats|statistics|metrics|totals|summary|"
    "inbox|notifications|updates|update|log|timeline|carryover|recap|heartbeat|session",
    "状态|进度|进展|完成|动态|统计|汇总|回顾|日志|记录",
    "상태|진행|진행 상황|완료|활동|통계|요약|기록|로그|작업 내역",
    "状態|状況|進捗|完了|活動|統計|まとめ|記録|ログ|作業",
)
PLAN_HEADING_WORDS = _words(
    "todo|to-do|to do|next|next steps|plan|plans|planned|tomorrow|backlog|ideas|queue|targets|"
    "goals|agenda|upcoming|follow-up|follow-ups|followups|open questions|questions",
    "计划|待办|下一步|明天|目标|待定|想法|问题",
    "계획|할 일|할일|다음|다음 단계|내일|목표|예정|아이디어|질문",
    "予定|計画|次|次回|明日|目標|やること|課題|アイデア|質問",
)
RULE_WORDS = _words(
    "must|must not|never|always|don't|do not|dont|shouldn't|should not|avoid|"
    "make sure|required|cannot|can't|not allowed|forbidden|prohibited|remember to|beware|"
    "mandatory|only works|doesn't work|does not work|reminder|don't forget|keep in mind|"
    "note that|the correct approach|the right approach|the right way|the correct way",
    "必须|务必|不要|别|不能|不可|禁止|避免|应该|应当|总是|始终|永远|一定要|只能|需要|记得|切勿|千万|优先",
    "반드시|꼭|항상|절대|하지 마|하지 말|말 것|말아야|금지|피해야|피할 것|해야|해야 한다|"
    "해야 함|할 것|하면 안|안 된다|안 됨|필수|주의|우선",
    "必ず|常に|絶対|しないこと|してはいけない|してはならない|禁止|避ける|避けること|べき|"
    "すること|しなければ|必要|必須|注意|優先|こと。",
)
PROCEDURE_WORDS = _words(
    "before|after|first|then|once|whenever|every time|each time|until|unless",
    "之前|之后|以后|首先|然后|每次|除非",
    "전에|후에|먼저|다음에|매번|때마다|하기 전|한 후",
    "前に|後に|まず|その後|毎回|たびに|までは",
)
WEAK_RULE_WORDS = _words(
    "should|ensure|requires|require|prefer|favor|favour|careful|fails|fail|breaks|won't|need|needs|only",
    "应|最好|尽量|会失败",
    "좋다|권장|실패",
    "ほうがいい|推奨|失敗",
)
REASON_WORDS = _words(
    "because|since|so that|due to|caused by|root cause|the reason|which means|otherwise|"
    "therefore|hence|as a result|that's why|leads to|results in|so it|in order to|"
    "to prevent|to avoid|to ensure|ensuring|prevents|which prevents|for proper|causing|"
    "caused|the point of|purpose",
    "因为|由于|所以|因此|导致|原因|以免|否则|以便|为了|防止|避免|目的",
    "때문에|때문|므로|으므로|이므로|위해|위하여|원인|이유|그래서|따라서|그러므로|않으면|방지|목적",
    "ため|ので|から。|原因|理由|結果|そのため|したがって|さもないと|ように|防ぐ|目的",
)
CORRECTION_WORDS = _words(
    "actually|turns out|turned out|in fact|no longer|instead of|rather than|was wrong|"
    "is wrong|incorrect|correction|corrected|misread|mistake|myth|debunked|contrary to|"
    "wasn't|isn't really|not a|not the|in favor of|in favour of",
    "其实|原来|不是|而是|并非|更正|纠正|错误|误解|不再",
    "아니라|아니다|사실은|사실|실제로|정정|잘못|오해|더 이상|대신",
    "ではなく|じゃなく|実は|実際は|訂正|誤り|間違い|誤解|もう|代わりに",
)
LIMIT_WORDS = _words(
    "limit|limits|limited|max|maximum|min|minimum|cap|capped|quota|cooldown|timeout|"
    "rate limit|at most|up to|no more than|at least|exceeds|exceed|per|threshold|allowed",
    "上限|下限|限制|最多|最少|至少|不超过|超过|冷却|超时|每",
    "제한|최대|최소|이하|이상|초과|한도|쿨다운|타임아웃|당",
    "上限|下限|制限|最大|最小|以下|以上|超過|クールダウン|タイムアウト|ごと|あたり",
)
PREFERENCE_WORDS = _words(
    "prefer|prefers|preferred|dislike|dislikes|don't like|do not like|like it|i like|i want|"
    "i'd like|i would like|i don't want|i do not want|please always|please never|hate|wish|"
    "i plan|my name|i am|i'm not|i think we should|we should|let's not|rather",
    "喜欢|不喜欢|讨厌|希望|偏好|想要|不想|我是|我们应该|请总是|请不要",
    "좋아|싫어|선호|원해|원합니다|원하지|바랍니다|제 이름|저는|우리는|해 주세요|하지 말아",
    "好き|嫌い|好む|希望|してほしい|しないでほしい|私は|私の名前|べきだと思|ください",
)
STATUS_WORDS = _words(
    "unread|no new|nothing new|still|remaining|pending|waiting|currently|so far|right now|"
    "as of|quiet|lifts|expires|expired|running total|session total|notifications|"
    "no response|no reply|no replies|0 replies|engagement|for now|at this time|at the moment|"
    "this time|for today|this session|so far today",
    "未读|没有新|暂无|仍然|仍|还在|剩余|剩下|等待|目前|当前|截至|在线|离线|总计|共",
    "읽지 않은|새로운 것 없|새 글 없|없음|아직|여전히|남은|대기|현재|지금까지|기준|온라인|오프라인|총|합계",
    "未読|新着なし|まだ|依然|残り|待機|現在|今のところ|時点|オンライン|オフライン|合計|計",
)
ACTIVITY_WORDS = _words(
    "replied|reply|posted|post|sent|send|liked|like|swiped|submitted|commented|comment|"
    "shared|published|followed|upvoted|voted|rated|emailed|messaged|pinged|checked|ran|"
    "committed|pushed|merged|deployed|installed|tested|created|added|updated|removed|fixed|"
    "wrote|read|reviewed|started|finished|completed|attempted|tried|retried|opened|closed|"
    "scanned|graduated|logged|welcomed|celebrated|engaged",
    "回复了|发布了|发送了|点赞|提交了|评论了|已发送|已回复|已完成|完成了|做了|检查了|运行了|"
    "创建了|添加了|更新了|修复了|删除了",
    "했다|했음|했습니다|완료|답장|회신|게시|보냈|전송|작성함|작성했|확인함|확인했|실행함|"
    "실행했|추가함|추가했|수정함|수정했|삭제함|삭제했|생성함|생성했",
    "しました|した。|完了|返信|投稿|送信|確認した|実行した|追加した|修正した|削除した|作成した",
)
PLAN_WORDS = _words(
    "todo|to-do|next|next step|next steps|plan|plans|planning|will|going to|gonna|tomorrow|"
    "later|soon|need to|needs to|should try|try to|want to|intend|for then|queued|upcoming",
    "计划|打算|准备|将要|待办|下一步|明天|稍后|之后|要去",
    "계획|예정|할 예정|하려고|할 것이다|할게|다음에|내일|나중에|곧",
    "予定|つもり|するつもり|次に|明日|後で|これから|しよう",
)
NARRATION_WORDS = _words(
    "let me|let's|let us|i'll|i will|i'm going to|i am going to|now i|now let|now i'll|"
    "great|perfect|excellent|awesome|sure|okay|ok|alright|i see|i've|i have|i can see|"
    "you're right|you're absolutely right|looks like|it seems|here's|here is|i'm|i am|i need|"
    "based on my|i understand|i notice|i found|i apologize|thanks|thank you",
    "让我|我来|我将|我会|好的|现在我|我们来|首先|我已经|我发现|看起来",
    "하겠습니다|보겠습니다|할게요|해볼게요|볼게요|좋습니다|알겠습니다|먼저|이제|네,|확인해",
    "しましょう|します。|してみます|確認します|了解|わかりました|まず|では、|見てみ",
)

_TOKEN = re.compile(r"[^\W_]+(?:'[^\W_]+)*")


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(unicodedata.normalize("NFKC", text).casefold().replace("’", "'"))


class Lexicon:
    """A list of cue words: Latin ones matched as whole words or phrases, case-insensitively
    (by tokens: linear in the text, however many words the list holds); others (Chinese,
    Korean, Japanese) as substrings of the NFKC-normalised text."""

    def __init__(self, words: Iterable[str]) -> None:
        self.words = tuple(dict.fromkeys(w.strip() for w in words if w.strip()))
        self._phrases: set[tuple[str, ...]] = set()
        self._longest = 1
        dense: list[str] = []
        for word in self.words:
            if word.isascii():
                phrase = tuple(_tokens(word))
                if phrase:
                    self._phrases.add(phrase)
                    self._longest = max(self._longest, len(phrase))
            else:
                dense.append(unicodedata.normalize("NFKC", word))
        self._dense = tuple(dense)

    def _hits(self, tokens: list[str], first_only: bool = False) -> int:
        found = 0
        for i in range(1 if first_only else len(tokens)):
            for size in range(1, min(self._longest, len(tokens) - i) + 1):
                if tuple(tokens[i : i + size]) in self._phrases:
                    found += 1
                    break
        return found

    def count(self, text: str) -> int:
        """How many cue occurrences `text` holds."""
        total = self._hits(_tokens(text)) if self._phrases else 0
        return total + sum(text.count(w) for w in self._dense)

    def search(self, text: str) -> bool:
        if self._phrases and self._hits(_tokens(text)):
            return True
        return any(w in text for w in self._dense)

    def ends(self, text: str) -> bool:
        """True when `text`, a sentence of a language that puts its verb last (Korean,
        Japanese), ends with one of the non-Latin words."""
        tail = text.rstrip(" \t.。!！?？)）\"'”’")
        return any(tail.endswith(w.rstrip("。")) for w in self._dense if w.rstrip("。"))

    def starts(self, text: str) -> bool:
        """True when `text` opens with one of the words (after spaces and punctuation)."""
        head = text.lstrip(" \t*_`>\"'“‘「『(-–—:：,.、")[:40]
        if self._phrases:
            tokens = _tokens(head)
            if tokens and head[:1].isalnum() and self._hits(tokens, first_only=True):
                return True
        return any(head.startswith(w) for w in self._dense)


@dataclass
class Cues:
    """The lexicons in use: the built-in lists plus configured extra `keep` and `skip`
    words (`offline.keep_cues`, `offline.skip_cues`)."""

    keep: Lexicon = field(default_factory=lambda: Lexicon(()))
    skip: Lexicon = field(default_factory=lambda: Lexicon(()))
    lesson: Lexicon = field(default_factory=lambda: Lexicon(LESSON_WORDS))
    strong_lesson: Lexicon = field(default_factory=lambda: Lexicon(STRONG_LESSON_WORDS))
    reading: Lexicon = field(default_factory=lambda: Lexicon(READING_WORDS))
    status_heading: Lexicon = field(default_factory=lambda: Lexicon(STATUS_HEADING_WORDS))
    plan_heading: Lexicon = field(default_factory=lambda: Lexicon(PLAN_HEADING_WORDS))
    rule: Lexicon = field(default_factory=lambda: Lexicon(RULE_WORDS))
    weak_rule: Lexicon = field(default_factory=lambda: Lexicon(WEAK_RULE_WORDS))
    procedure: Lexicon = field(default_factory=lambda: Lexicon(PROCEDURE_WORDS))
    reason: Lexicon = field(default_factory=lambda: Lexicon(REASON_WORDS))
    correction: Lexicon = field(default_factory=lambda: Lexicon(CORRECTION_WORDS))
    limit: Lexicon = field(default_factory=lambda: Lexicon(LIMIT_WORDS))
    preference: Lexicon = field(default_factory=lambda: Lexicon(PREFERENCE_WORDS))
    status: Lexicon = field(default_factory=lambda: Lexicon(STATUS_WORDS))
    activity: Lexicon = field(default_factory=lambda: Lexicon(ACTIVITY_WORDS))
    plan: Lexicon = field(default_factory=lambda: Lexicon(PLAN_WORDS))
    narration: Lexicon = field(default_factory=lambda: Lexicon(NARRATION_WORDS))

    @classmethod
    def configured(cls, keep: Iterable[str] = (), skip: Iterable[str] = ()) -> Cues:
        return cls(keep=Lexicon(keep), skip=Lexicon(skip))


@dataclass(frozen=True)
class Judgement:
    """The salience of one entry: `score`, the cues that fired (name → weight applied), and
    `reason` — None when the entry is kept, else why it is not."""

    score: float
    cues: dict[str, float]
    reason: str | None

    @property
    def kept(self) -> bool:
        return self.reason is None


# --- structure ------------------------------------------------------------------------------

_CLOCK = re.compile(
    r"(?<![\d:])(?:[01]?\d|2[0-3]):[0-5]\d(?::[0-5]\d)?(?![\d:])|\b\d{1,2}\s?(?:am|pm)\b", re.I
)
# Time left or elapsed — a snapshot of a moment ("23h remaining", "~1hr", "2 days ago"); a
# duration in a rule ("backups older than 30 days") is not one.
_DURATION = re.compile(
    r"~\s?\d+(?:\.\d+)?\s?[^\W\d_]{0,7}"
    r"|\b\d+\+\s?(?:h|hrs?|hours?|min|mins|minutes?|days?)\b"
    r"|\b(?:in|within|after|for)\s+\d+(?:\.\d+)?\s?(?:h|hrs?|hours?|min|mins|minutes?)\b"
    r"|\b\d+\s?(?:h|hr|hrs)\b"
    r"|\b\d+(?:\.\d+)?\s?(?:h|hr|hrs|hours?|m|min|mins|minutes?|d|days?|s|sec|secs)\s+(?:remaining|left|ago)\b"
    r"|(?:剩余|还剩)\s?\d+|\d+\s?(?:小时|分钟|天)(?:后|前)|\d+\s?(?:시간|분|일)\s?(?:남음|남았|전)|残り\s?\d+",
    re.I,
)
_COUNT = re.compile(
    r"(?<![\w.#-])\d+\+?\s+(?!(?:19|20)\d\d)[^\W\d_]{2,}|(?<![\w.])[x×]\d+\b|\b\d+\s*(?:개|건|명|件|个|条|次|回)"
)
_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)?%?(?![\w.])")
_OPAQUE_ID = re.compile(
    r"\b(?=[0-9a-f]{0,40}[a-f])(?=[0-9a-f]{0,40}\d)[0-9a-f]{7,40}\b"  # hex ids, commit hashes
    r"|(?<![A-Za-z0-9_-])[a-z]{1,20}_[A-Za-z0-9_-]{0,40}\d[A-Za-z0-9_-]{6,40}\b"  # prefixed ids: sh_comment_4sOj…
    r"|(?<![A-Za-z0-9])[A-Za-z0-9]{20,200}(?![A-Za-z0-9])"
)
_PAREN_ID = re.compile(r"\((?:id:\s*)?(?=[^()\s]*\d)(?=[^()\s]*[A-Za-z])[A-Za-z0-9_-]{6,40}\)")
_ORDINAL = re.compile(r"^\s*(?:\d{1,3}[.)]|[-*+•])\s+")
_BOLD_LABEL = re.compile(r"^\s*(?:(?:\d{1,3}[.)]|[-*+•])\s+)?\*\*([^*\n]{1,80}?):?\*\*:?\s*(\S.*)$", re.S)
_COLON_LABEL = re.compile(r"^\s*(?:(?:\d{1,3}[.)]|[-*+•])\s+)?([^\s:：][^:：\n]{0,40}?)[:：]\s+(\S.*)$", re.S)
_CODE_NAME = re.compile(
    r"`[^`\n]{2,80}`|(?<![\w.-])[\w-][\w.-]{0,80}\.(?:py|sh|js|ts|md|json|toml|yaml|yml|ini|cfg|txt|rs|go)\b"
)
_DEFINES = re.compile(
    r"^\s*(?:\*\*)?`[^`\n]{2,80}`(?:\*\*)?[^—–:：=\n]{0,60}?\s*(?:—|–| - |:|：|=)\s*\S|^\s*(?:\*\*)?[\w./-]+\.(?:py|sh|js|ts|md|json|toml|yaml|yml|ini|rs|go)\b[^—–:：\n]{0,40}?\s*(?:—|–| - |:|：)\s*\S"
)
_IS_A = re.compile(r"\b(?:is|are)\s+(?:a|an|the|one of)\b|\blives? (?:at|in)\b|\blocated (?:at|in)\b", re.I)
_IS_A_DENSE = ("是一个", "是一种", "位于", "이다", "입니다", "에 있다", "である", "です。", "にある")
_ARROW = re.compile(r"\S\s*(?:→|->|=>|⇒|≠)\s*\S")
_OUTPUT_LINE = re.compile(
    r"^\s*(?:[⎿✓✗✔✘│├└┌┐╭╮╰╯║═$#>]|>>>|\.\.\.|={3,}|-{3,}|\+{3,}|@@|\d+\s{2,}|[A-Z_]+=)"
    r"|\(ctrl\+r to expand\)|^\s*[…]\s*\+\d+ lines"
)
_WORD = re.compile(r"[^\W\d_]{2,}")
_DENSE_CHAR = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_EMOJI_STATUS = re.compile("[\u2705\u274c\u26a0\u2714\u2716\u2611\U0001f534\U0001f7e2\U0001f7e1\u23f3\u2b50]")
_EMPHASIS = re.compile(r"(?<![\w-])[A-Z]{5,}(?![\w-])")
_REFERENCE = re.compile(
    r"`[^`\n]{2,}`|https?://\S+|(?<![\w.~/-])(?:~|\.{1,2})?/[\w.-]{1,80}/[\w./{}:-]+|(?<![\w.-])[\w.-]{1,64}@[\w-]{1,64}\.\w+"
)
_NAME_DASH = re.compile(r"^\s*(?:\*\*)?[^\W\d][^—–:=\n]{0,40}?(?:\*\*)?(?:\s*\([^()\n]{1,40}\))?\s+[—–]\s+\S")
_EQUATION = re.compile(r"^\s*[^\W\d][\w .-]{0,30}\s=\s\S")
_QUOTATION = re.compile(
    r'"[^"\n]{1,400}"|“[^”\n]{1,400}”|「[^」\n]{1,400}」|『[^』\n]{1,400}』|«[^»\n]{1,400}»'
)
# A citation: an author and a year in parentheses — "(Wartel et al. 2021)", "(PNAS 2025, Campbell)".
_CITATION = re.compile(
    r"\([^()\n]{0,60}(?:et al\.?|[A-Z][A-Za-z&.-]+)[^()\n]{0,40}(?:19|20)\d\d[^()\n]{0,40}\)|\bet al\b|\barXiv\b"
)
_RECOUNT = re.compile(
    r"(?<![\w'])(?:the\s+)?(?:user|i|we)\s+(?:\w+ly\s+)?(?:asked|noted|explained|discussed|encountered|"
    r"indicated|mentioned|said|requested|wanted|agreed|talked)\b|用户(?:要求|问|提到|表示)|"
    r"사용자가\s?(?:요청|물|언급)|ユーザーが(?:求め|尋ね|言及)",
    re.I,
)
_NARRATION_GLYPH = re.compile(r"^\s*[⏺●✻]")
_QUOTED_USER = re.compile(r"^\s*>\s")


def _norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text)


_VERB_HEAD = re.compile(r"^\s*[^\W\d_]+(?:ed|t)\s+", re.I)


def opening_of(text: str) -> str:
    """`text` without a leading past-tense verb ("Created `x` — …" → "`x` — …")."""
    return _VERB_HEAD.sub("", text, count=1)


def label_of(text: str) -> tuple[str | None, str]:
    """`(label, rest)`: a leading bold label (`**Label:** rest`) or short colon label
    (`Label: rest`), else `(None, text)`."""
    match = _BOLD_LABEL.match(text)
    if match:
        return match.group(1).strip().rstrip(":："), match.group(2)
    match = _COLON_LABEL.match(text)
    if match and "`" not in match.group(1) and "http" not in match.group(1).lower():
        return match.group(1).strip(), match.group(2)
    return None, text


def _output_share(text: str) -> float:
    lines = [line for line in text.split("\n") if line.strip()]
    if not lines:
        return 1.0
    if _QUOTED_USER.match(lines[0]):
        return 0.0
    if re.match(r"^(?: {4,}|\t)", lines[0]):
        return 1.0  # an indented code block (Markdown), or a tool's output in a terminal log
    out = 0
    for line in lines:
        bare = " ".join(_ORDINAL.sub("", line, count=1).split())  # runs of spaces are layout
        letters = sum(1 for ch in bare if ch.isalpha())
        if _OUTPUT_LINE.search(line) or letters < 0.4 * len(bare):
            out += 1
    return out / len(lines)


def is_event_heading(heading: str, cues: Cues | None = None) -> bool:
    """A heading that is an event or a tally: a clock time, a count ("Writes (3)",
    "3 writes + 2 likes"), or a status/activity heading word."""
    cues = cues or _DEFAULT_CUES
    text = _norm(heading)
    if _CLOCK.search(text) or re.search(r"\(\s*\d+[^)]*\)|\b\d+\s*[^\W\d_]+\s*[+,&]\s*\d+", text):
        return True
    words = re.sub(r"[\W\d_]+", " ", text).strip()
    return bool(words) and cues.status_heading.count(words) > 0 and not cues.lesson.search(words)


class _Reading:
    """The cues of one entry, found in three passes: where it stands (headings, labels,
    tags), what form it has (output, narration, questions) and what it says."""

    def __init__(self, entry: Entry, text: str, cues: Cues) -> None:
        self.entry = entry
        self.cues = cues
        self.raw = _norm(entry.text)
        self.body = _norm(text)
        self.said = _QUOTATION.sub(" ", self.body)  # someone else's words, quoted, state no rule of ours
        self.first = self.raw.strip().split("\n", 1)[0]
        self.headings = [_norm(h) for h in entry.context[-2:]]
        label, rest = label_of(self.raw.split("\n", 1)[0] if self.raw.strip() else self.raw)
        if label is None:
            label, rest = label_of(self.body)
        self.label, self.rest = label, rest
        self.fired: dict[str, float] = {}

    def fire(self, name: str, times: float = 1.0) -> None:
        self.fired[name] = self.fired.get(name, 0.0) + WEIGHTS[name] * times

    def place(self) -> None:
        """Headings, labels, tags and configured cues."""
        cues, fire, label = self.cues, self.fire, self.label
        if any(cues.strong_lesson.search(h) and not _CLOCK.search(h) for h in self.headings):
            fire("lesson-heading")
        elif any(cues.lesson.search(h) and not _CLOCK.search(h) for h in self.headings):
            fire("lesson-heading", 0.5)  # "Notes", "Setup": a kind of section, not yet a lesson
        elif any(cues.plan_heading.search(h) and not cues.lesson.search(h) for h in self.headings):
            fire("plan")
        if label is not None and cues.strong_lesson.search(label):
            fire("lesson-label")
        elif label is not None and cues.lesson.search(label):
            fire("lesson-label", 0.5)
        elif label is not None and cues.plan_heading.search(label):
            fire("plan")
        elif label is not None and cues.status_heading.search(label):
            fire("status", 0.5)  # "Inbox:", "Status:", "진행 상황:": the slot of a status snapshot
        if any(is_event_heading(h, cues) for h in self.headings[-1:]):
            fire("event-heading")
        if any(cues.reading.search(h) for h in self.headings) or _CITATION.search(self.body):
            fire("reading")
        if cues.keep.search(self.body):
            fire("keep-cue")
        if self.entry.tags:
            fire("tagged")  # the agent filed it under a subject itself: deliberate curation
        if cues.skip.search(self.body):
            fire("skip-cue")

    def form(self) -> None:
        """Output, narration, questions, fragments, a session recounted."""
        cues, fire, body, first = self.cues, self.fire, self.body, self.first
        if _output_share(self.raw) >= 0.5 or "(ctrl+r to expand)" in self.raw:
            fire("output")
        glyph = _NARRATION_GLYPH.match(first) and cues.narration.starts(_NARRATION_GLYPH.sub("", first))
        if glyph or (self.entry.role == "assistant" and cues.narration.starts(body)):
            fire("narration")
        elif cues.narration.starts(body) and not _QUOTED_USER.match(first):
            fire("narration", 0.5)
        stripped = body.rstrip()
        if stripped.endswith(("?", "？")):
            fire("question")
        if stripped.endswith((":", "：")) and content_words(stripped) < 12:
            fire("fragment")
        if _RECOUNT.search(body):
            fire("activity")  # the session recounted: who asked, noted, explained what

    def knowledge(self) -> None:
        """Rules, reasons, procedures, corrections, limits, preferences, definitions."""
        cues, fire, body, said, label, rest = (
            self.cues,
            self.fire,
            self.body,
            self.said,
            self.label,
            self.rest,
        )
        if cues.rule.search(said):
            fire("rule")
        elif cues.weak_rule.search(said):
            fire("rule", 0.5)
        if cues.reason.search(said):
            fire("reason")
        if ("rule" in self.fired or cues.weak_rule.search(said)) and cues.procedure.search(said):
            fire("procedure")  # an order of steps with a modal: how to do something
        if cues.correction.search(body) or re.search(r"\bNOT\b|\bnot\b[^.;]{1,60}\bbut\b", body):
            fire("correction")
        if _NUMBER.search(body) and cues.limit.search(body):
            fire("limit")
        user = self.entry.role == "user" or bool(_QUOTED_USER.match(self.first))
        if user and cues.preference.search(body):
            fire("preference")
        if _EMPHASIS.search(said):
            fire("emphasis")  # a word in capitals for stress: NEVER, EXTENDS
        if label is not None and _REFERENCE.search(rest):
            fire("reference")  # a labelled value: an endpoint, a path, a command, an address
        self.artifact = bool(_CODE_NAME.search(body[:120]))
        if (_DEFINES.match(body) or _DEFINES.match(opening_of(body))) and self.artifact:
            fire("definition")
        elif _NAME_DASH.match(body) or _EQUATION.match(body):
            fire("definition", 0.5)  # "Ocean Tiger — runs the mail service", "ASS = a × b"
        elif (
            _IS_A.search(body)
            or any(w in body for w in _IS_A_DENSE)
            or (label is not None and len(rest.split()) >= 4 and "**" in self.raw[:4] + self.first[:6])
        ):
            fire("definition", 0.5)

    def moment(self) -> None:
        """Status, counts, clock times, ids, activity, plans: what was true at a moment."""
        cues, fire, body, label = self.cues, self.fire, self.body, self.label
        status_hits = cues.status.count(body)
        if status_hits:
            fire("status", min(2.0, float(status_hits)) / 2)
        counted = _COUNT.findall(body)
        if len(counted) >= 2 and "limit" not in self.fired:
            fire("counts", min(2.0, (len(counted) - 1) / 2))
        if _CLOCK.search(body) or _DURATION.search(body):
            fire("clock")
        ids = len(_OPAQUE_ID.findall(self.raw)) + len(_PAREN_ID.findall(self.raw))  # the fact text lost them
        if ids:
            fire("id", min(2.0, float(ids)))
        opening = self.rest if label is not None else body
        acted = cues.activity.starts(opening) or cues.activity.starts(body) or cues.activity.ends(body)
        if acted or (label is not None and cues.activity.search(label)):
            if self.artifact and _DEFINES.match(opening_of(body)) and len(body.split()) >= 5:
                self.fired.setdefault("definition", WEIGHTS["definition"])  # made a named tool or file
            else:
                fire("activity")
        if (
            cues.plan.starts(opening)
            or cues.plan.starts(body)
            or re.match(r"^\s*(?:[-*+]\s+)?\[ \]", self.raw)
        ):
            fire("plan")
        if _EMOJI_STATUS.search(body[:3]):
            fire("status", 0.5)


def judge(entry: Entry, text: str, cues: Cues, threshold: float) -> Judgement:
    """The Judgement of one entry whose cleaned fact text is `text` (module docstring):
    `score` is the sum of the weights of its cues; at or above `threshold` it is kept,
    below it the reason is its strongest negative cue (`REASONS`), or `NOT_DURABLE`.

    Pure: the verdict depends on the entry (text, headings, role, tags) alone; never
    raises."""
    reading = _Reading(entry, text, cues)
    reading.place()
    reading.form()
    reading.knowledge()
    reading.moment()
    fired = reading.fired
    score = round(sum(fired.values()), 3)
    if score >= threshold:
        return Judgement(score, fired, None)
    negatives = {k: v for k, v in fired.items() if v < 0}
    if not negatives:
        return Judgement(score, fired, NOT_DURABLE)
    worst = min(negatives, key=lambda k: (negatives[k], k))
    return Judgement(score, fired, REASONS[worst])


def content_words(text: str) -> int:
    """A rough count of words: Latin-script words of two letters or more, plus one per
    two CJK characters."""
    return len(_WORD.findall(text)) + len(_DENSE_CHAR.findall(text)) // 2


_KIND_LABEL = re.compile(
    r"^\s*(?:key\s+)?(?:lesson|lessons|learning|learnings|learned|insight|insights|takeaway|"
    r"note|tip|finding|교훈|메모|팁|教训|心得|笔记|教訓|メモ|学び)(?:\s+learned)?\s*[:：]\s*(?=\S)",
    re.I,
)


def without_kind_label(text: str) -> str:
    """`text` without a leading label that only says what kind of knowledge follows
    ("Lesson: X", "Key insight: X", "교훈: X" → "X"); the salience of the entry was judged
    with it."""
    rest = _KIND_LABEL.sub("", text, count=1)
    return rest[:1].upper() + rest[1:] if rest is not text and rest[:1].islower() else rest


def is_lesson_heading(heading: str, cues: Cues | None = None) -> bool:
    """True when `heading` holds nothing but words that name a kind of knowledge
    ("Lessons learned", "Notes", "교훈"): it says what kind, not what about."""
    cues = cues or _DEFAULT_CUES
    words = re.sub(r"[\W\d_]+", " ", _norm(heading)).split()
    return bool(words) and all(cues.lesson.search(w) or len(w) < 3 for w in words)


_DEFAULT_CUES = Cues()
