"""Salience and topic names beyond the languages the labels hold (issue #14, item 1: "no rule
may rest on English words alone"): found by the probe corpus (`bench/probe/`), each rule has
a small hand-written case here that fails without it. Spanish, German, French and Portuguese
cue words are matched as whole words like English ones; a full-width colon ends a label; a
clock time opening an entry is layout; a dated title or a lesson's label does not date what
is under it."""

from __future__ import annotations

from datetime import date

import pytest

from gitdream.dream import grouping, salience
from gitdream.dream.lexicons import Lexicon
from gitdream.dream.salience import Cues, judge
from gitdream.engines.offline import clean_text
from gitdream.units import Entry

LOG = "agents/ops/memory/logs/2026/04/2026-04-07.md"


def _entry(text: str, *context: str) -> Entry:
    return Entry(LOG, 1, 1, text, date(2026, 4, 7), tuple(context), "log", None, ())


def verdict(text: str, *context: str) -> salience.Judgement:
    entry = _entry(text, *context)
    return judge(entry, clean_text(entry, None), Cues(), salience.DEFAULT_THRESHOLD)


@pytest.mark.parametrize(
    "text",
    [
        "- 决定：缓存过期时间从 5 分钟改为 1 分钟，因为库存显示不准。",
        "- 佐藤さんの方針：ログには顧客の氏名を書かない。",
        "- 결정：캐시 만료 시간을 1분으로 줄인다.",
    ],
)
def test_a_full_width_colon_ends_a_label_without_a_space(text: str) -> None:
    assert salience.label_of(salience._norm(text.removeprefix("- ")))[0] is not None
    assert "lesson-label" in verdict(text, "14:00 巡检").cues


def test_accented_words_of_spaced_scripts_match_whole_words() -> None:
    assert not Lexicon(["más"]).search("los demás clientes")
    assert Lexicon(["más"]).search("no más de diez")
    assert not Lexicon(["nie"]).search("die Niere")
    assert "rule" in verdict("- Siempre hay que pedir el número de pedido antes de reembolsar.").cues
    assert "rule" in verdict("- Rechnungen muss man vor dem Versand prüfen.").cues
    assert "correction" in verdict("- Corrección: el almacén cierra a las seis, no a las siete.").cues
    assert "reason" in verdict("- On ferme les tickets le vendredi parce que l'équipe part tôt.").cues


@pytest.mark.parametrize(
    ("text", "lesson"),
    [
        ("- Los pedidos de más de 500 € necesitan la firma de Laura.", True),
        ("- Llamé al cliente de las 10, todo resuelto.", False),
        ("- Das Backup-Skript muss als root laufen, sonst fehlen Dateien.", True),
        ("- Mittagessen, danach Tickets.", False),
    ],
)
def test_a_rule_in_spanish_or_german_is_kept_and_a_record_is_not(text: str, lesson: bool) -> None:
    assert verdict(text, "Notas del turno").kept is lesson


def test_a_clock_time_opening_an_entry_is_layout() -> None:
    entry = _entry("- 09:12 releases from main need the signed tag first.")
    assert clean_text(entry, None).startswith("releases from main")
    assert "clock" not in verdict("- 09:12 releases from main need the signed tag first.").cues
    assert "clock" in verdict("- the release window closes at 09:40 today.").cues
    assert clean_text(_entry("- [14:02 UTC] the mirror drops idle connections."), None).startswith(
        "the mirror"
    )


def test_a_duration_is_not_a_limit_and_an_error_rate_is_not_a_correction() -> None:
    assert "limit" not in verdict("- Llamada con el proveedor, 25 min").cues
    assert "limit" in verdict("- Uploads are limited to 25 MB per file.").cues
    assert "correction" not in verdict("- 上线完成，错误率 0.05%").cues
    assert "correction" in verdict("- 之前记的端口是错的，应该是 8443。").cues


def test_a_dated_title_is_not_the_subject_of_the_section() -> None:
    text = "- 서버 점검은 매주 화요일 새벽에 한다."
    assert "reading" not in verdict(text, "2026-04-07 연구실 로그", "오후").cues
    assert "reading" in verdict(text, "연구 노트").cues


def test_the_moment_in_a_lessons_label_does_not_date_the_lesson() -> None:
    learnt = verdict("- 今日の学び：本番のマイグレーションは必ずバックアップの後に流す。")
    assert "momentary" not in learnt.cues and learnt.kept
    assert "momentary" in verdict("- 今日はマイグレーションを流した。").cues


@pytest.mark.parametrize(
    "text",
    ["- 모든 배포는 리뷰를 받아야 함.", "- 所有配置变更都要走工单。"],
)
def test_korean_and_chinese_obligation_forms_are_rules(text: str) -> None:
    assert "rule" in verdict(text).cues


@pytest.mark.parametrize(
    "name", ["오후", "午後", "下午", "Turno de mañana", "Nachmittag", "Après-midi", "振り返り"]
)
def test_a_moment_of_the_day_in_any_language_does_not_name_a_topic(name: str) -> None:
    assert grouping.unfit_name(name)


def test_a_dunder_name_is_not_bold_and_a_sentence_ending_item_is_not_joined_with_a_semicolon() -> None:
    from gitdream.engines.offline import strip_layout

    assert strip_layout("Keep the __init__.py files; `__main__` runs it") == (
        "Keep the __init__.py files; `__main__` runs it"
    )
    assert (
        strip_layout("Solved __init__ confusion, __two words__ bold")
        == "Solved __init__ confusion, two words bold"
    )
    assert (
        strip_layout("- **Build**: the graph tool.\n  - Extracts claims")
        == "- Build: the graph tool. Extracts claims"
    )


@pytest.mark.parametrize(
    ("status", "rule"),
    [
        ("- The test account still doesn't work.", "- Always check the signature first."),
        ("- La cuenta de pruebas todavía no funciona.", "- Siempre revisar la firma primero."),
        ("- Das Testkonto funktioniert immer noch nicht.", "- Immer zuerst die Signatur prüfen."),
        ("- Le compte de test ne fonctionne toujours pas.", "- Toujours vérifier la signature d'abord."),
        ("- A conta de teste ainda não funciona.", "- Sempre verificar a assinatura primeiro."),
        ("- 测试账号还是不能登录。", "- 必须先检查签名。"),
        ("- 테스트 계정은 아직 안 된다.", "- 반드시 서명을 먼저 확인한다."),
    ],
)
def test_a_state_that_persists_is_a_status_not_a_rule_in_every_language(status: str, rule: str) -> None:
    """ "toujours pas", "immer noch nicht", "todavía no", "ainda não" hold the word that
    elsewhere is "always" (or a rule's negation: "no funciona", 不能, 안 된다): a status."""
    still = verdict(status)
    assert "rule" not in still.cues and "generic" not in still.cues, still.cues
    assert not still.kept and still.reason == "status snapshot", still
    assert "rule" in verdict(rule).cues


@pytest.mark.parametrize(
    ("measured", "corrected"),
    [
        ("- The sync copies 640 files instead of 90 now.", "- Use rsync instead of cp for the backups."),
        (
            "- La sincronización copia 640 archivos en lugar de 90.",
            "- Usa rsync en lugar de cp para las copias.",
        ),
        ("- Der Sync kopiert 640 Dateien statt 90.", "- Für Backups rsync statt cp verwenden."),
        (
            "- La synchro copie 640 fichiers au lieu de 90.",
            "- Utiliser rsync au lieu de cp pour les sauvegardes.",
        ),
        ("- A sincronização copia 640 arquivos em vez de 90.", "- Use rsync em vez de cp para os backups."),
        ("- 同步复制了 640 个文件而不是 90 个。", "- 备份用 rsync 而不是 cp。"),
    ],
)
def test_a_comparison_of_quantities_is_not_a_correction(measured: str, corrected: str) -> None:
    assert "correction" not in verdict(measured).cues
    assert "correction" in verdict(corrected).cues


@pytest.mark.parametrize(
    "guess",
    [
        "I think the outage was caused by the cache.",
        "Creo que la caída fue por la caché.",
        "Ich glaube, der Ausfall wurde durch den Cache verursacht.",
        "Je pense que la panne a été causée par le cache.",
        "Acho que a queda foi causada pelo cache.",
        "我觉得故障是缓存引起的了。",
        "장애는 캐시 때문이었다고 생각합니다.",
        "障害はキャッシュが原因だったと思う。",
    ],
)
def test_a_hedged_belief_is_a_belief_in_every_language(guess: str) -> None:
    """ "I think", "creo que", "ich glaube", "je pense que", "acho que", 我觉得, 생각합니다, と思う
    mark a belief (`HEDGE_WORDS`), in each of the eight languages."""
    assert Cues().hedge.search(salience._norm(guess)), guess


@pytest.mark.parametrize(
    "text",
    [
        "- Check the signature first, before publishing.",
        "- Vérifier d'abord la signature avant de publier.",
        "- Revisar primero la firma antes de publicar.",
        "- Prüfe zuerst die Signatur, bevor du veröffentlichst.",
        "- Verificar primeiro a assinatura antes de publicar.",
    ],
)
def test_an_instruction_with_an_order_of_steps_is_a_procedure_in_every_language(text: str) -> None:
    """An imperative (or the infinitive a note instructs with: "vérifier d'abord …") opening
    an entry is a rule, and with an order of steps a procedure; the same told as done is not."""
    assert {"rule", "procedure"} <= verdict(text).cues.keys()
    assert verdict(text).kept
    assert "procedure" not in verdict("- Checked the signature before publishing.").cues
