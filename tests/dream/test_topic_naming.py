"""Topic names and index lines that read well (issue #14, items 3 and 6), in any language:
a new topic is named after the subject most of its facts share — not a common word of its
heading, a code identifier, a heading with a counter or a directory quoted in a message —,
and its description is the fact that best states what it holds: not a label-prefixed recap
or cause, not a line of chat, not a sentence leaning on the one before it; preferably one
naming the topic's subject. Hand-written logs and facts; the real offline engine."""

from __future__ import annotations

import pytest

from gitdream.dream import grouping
from gitdream.dream.describe import summary_of
from gitdream.engines import offline
from tests.dream.test_describe import fact
from tests.dream.test_grouping import _distill, _entry

SHARED_SUBJECT = {
    "en": (
        "Stage",
        [
            "- Never stage files by hand after the hooks ran, because they already fixed the whitespace.",
            "- Grafana alerts must go to the on-call channel, because email is read too late.",
            "- Grafana dashboards must be provisioned from the repository, never edited in the UI.",
            "- Always pin the Grafana version in the compose file, because upgrades change the panels.",
        ],
    ),
    "de": (
        "Reihenfolge",
        [
            "- Niemals die Dateien von Hand vormerken, weil die Hooks den Leerraum schon korrigiert haben.",
            "- Grafana-Alarme müssen in den Bereitschaftskanal gehen, weil E-Mails zu spät gelesen werden.",
            "- Die Dashboards von Grafana müssen aus dem Repository kommen, nie in der Oberfläche bearbeitet.",
            "- Immer die Version von Grafana in der Compose-Datei festlegen, weil Upgrades die Panels ändern.",
        ],
    ),
    "es": (
        "Orden",
        [
            "- Nunca prepares los archivos a mano después de los hooks, porque ya corrigieron los espacios.",
            "- Las alertas de Grafana deben ir al canal de guardia, porque el correo se lee tarde.",
            "- Los paneles de Grafana deben venir del repositorio, nunca editados en la interfaz.",
            "- Fija siempre la versión de Grafana en el archivo compose, porque las actualizaciones cambian los paneles.",
        ],
    ),
}


def _topics(heading: str, lines: list[str]) -> set[tuple[str, str]]:
    result = _distill([_entry(2, 5 + i, text, heading) for i, text in enumerate(lines)])
    assert result.units, result.skipped
    return {(unit.topic, unit.title) for unit in result.units}


@pytest.mark.parametrize("language", sorted(SHARED_SUBJECT))
def test_a_new_topic_is_named_after_the_subject_most_of_its_facts_name_not_its_heading_word(
    language: str,
) -> None:
    heading, lines = SHARED_SUBJECT[language]
    assert _topics(heading, lines) == {("grafana", "Grafana")}


POOR_NAMES = {
    # a code identifier every fact repeats; the platform most facts name
    "en": (
        "Loading",
        [
            "- `MATCH_BY_COLUMN_NAME` must be set on every COPY, because Snowflake otherwise loads columns by position.",
            "- Always load into Snowflake through the staging table, because a failed COPY leaves it half-filled; use `MATCH_BY_COLUMN_NAME`.",
            "- Snowflake warehouses must suspend after 60 seconds, because idle time is billed; set `MATCH_BY_COLUMN_NAME` too.",
        ],
        ("snowflake", "Snowflake"),
    ),
    # a heading with an occurrence counter ("second time"); the tool every fact names
    "de": (
        "worker-07 (zweites Mal)",
        [
            "- Der cert-manager muss die ClusterIssuer-Referenz prüfen, weil sonst kein Zertifikat ausgestellt wird.",
            "- Nach jedem Upgrade von cert-manager immer die CRDs zuerst anwenden, weil die Webhooks sonst fehlschlagen.",
            "- Der cert-manager darf nie zwei Issuer mit demselben Secret haben, weil sie sich gegenseitig überschreiben.",
        ],
        ("cert-manager", "cert-manager"),
    ),
    # a directory the messages quote; the tool they are about
    "fr": (
        "Notes",
        [
            "- Les brouillons de ops-runbooks/deploy.yml ne sont jamais lus par Ansible, parce que seule la version publiée compte.",
            "- Ansible doit toujours tourner avec --check avant ops-runbooks/site.yml, parce qu'une erreur casse l'inventaire.",
            "- Ne jamais lancer Ansible depuis ops-runbooks/hosts.yml, parce que les chemins relatifs y sont faux.",
        ],
        ("ansible", "Ansible"),
    ),
}


@pytest.mark.parametrize("language", sorted(POOR_NAMES))
def test_an_identifier_a_counted_heading_or_a_directory_does_not_name_a_topic_when_a_subject_does(
    language: str,
) -> None:
    heading, lines, expected = POOR_NAMES[language]
    assert _topics(heading, lines) == {expected}


@pytest.mark.parametrize(
    ("name", "texts"),
    [
        ("snowflake_default", []),
        ("MATCH_BY_COLUMN_NAME", []),
        ("worker-07 (zweites Mal)", []),
        ("pyproject.toml", []),
        ("claude-dev-log-diary", ["Bitte lies claude-dev-log-diary/day-002.md"]),
        ("conftest", ["El archivo conftest.py se carga antes de las pruebas."]),
    ],
)
def test_paths_files_identifiers_and_counters_are_poor_names(name: str, texts: list[str]) -> None:
    assert grouping.poor_name(name, texts)


def test_a_tool_also_named_alone_is_not_a_poor_name_and_a_word_written_small_is_common() -> None:
    assert not grouping.poor_name("pytest", ["run pytest first", "see pytest.ini"])
    assert grouping.common_word("Stage", ["Stage all files.", "we stage the fixes"])
    assert grouping.common_word("Keep", ["Review docs; Keep the metadata current"])
    assert not grouping.common_word("Grafana", ["Grafana alerts", "the dashboards of Grafana"])


def test_a_topic_keeps_its_name_when_no_subject_is_shared_by_enough_of_its_facts() -> None:
    texts = [
        "Grafana alerts go to the on-call channel.",
        "Backups run nightly.",
        "Tokens expire after 35 days.",
        "Ansible runs with --check first.",
    ]
    assert grouping.subject_of(texts, "Operations") is None


def _line(title: str, texts: list[str]) -> str:
    return summary_of([fact(text, day=i + 1) for i, text in enumerate(texts)], title)


@pytest.mark.parametrize(
    ("title", "texts", "expected"),
    [
        (
            "cert-manager",
            [
                "Grund: die ClusterIssuer-Secret-Referenz von cert-manager zeigte noch auf das alte Secret.",
                "Der cert-manager erneuert Zertifikate 30 Tage vor Ablauf.",
            ],
            "Der cert-manager erneuert",
        ),
        (
            "Snowflake",
            [
                "Motivo: la tarea de Snowflake usaba todavía el almacén antiguo.",
                "Snowflake suspende el almacén tras 60 segundos sin consultas.",
            ],
            "Snowflake suspende",
        ),
        (
            "Grafana",
            [
                "Raison : la source de données de Grafana pointait encore vers l'ancien serveur.",
                "Grafana lit ses tableaux de bord dans le dossier de provisionnement au démarrage.",
            ],
            "Grafana lit",
        ),
    ],
)
def test_a_sentence_behind_a_label_that_is_not_the_topic_does_not_describe_it(
    title: str, texts: list[str], expected: str
) -> None:
    assert _line(title, texts).startswith(expected)


@pytest.mark.parametrize(
    ("title", "texts", "expected"),
    [
        (
            "YAGNI",
            [
                "I think we should also drop the autofixer from the docs, because YAGNI.",
                "The docs describe only the tools the project uses, following YAGNI.",
            ],
            "The docs describe",
        ),
        (
            "部署",
            ["我觉得我们应该删掉部署脚本里的重试。", "部署脚本在失败时会回滚到上一个版本。"],
            "部署脚本在失败时",
        ),
        (
            "배포",
            [
                "저는 배포 스크립트의 재시도를 빼야 한다고 생각합니다.",
                "배포 스크립트는 실패하면 이전 버전으로 되돌립니다.",
            ],
            "배포 스크립트는",
        ),
    ],
)
def test_a_line_of_chat_in_the_first_person_does_not_describe_a_topic(
    title: str, texts: list[str], expected: str
) -> None:
    assert _line(title, texts).startswith(expected)


@pytest.mark.parametrize(
    ("texts", "expected"),
    [
        (
            ["So, the dashboard is wrong, not intended.", "The dashboard counts only finished orders."],
            "The dashboard",
        ),
        (
            [
                "Also, das Dashboard ist falsch, nicht gewollt.",
                "Das Dashboard zählt nur abgeschlossene Bestellungen.",
            ],
            "Das Dashboard",
        ),
        (
            [
                "Donc, le dashboard est faux, pas voulu.",
                "Le dashboard ne compte que les commandes terminées.",
            ],
            "Le dashboard",
        ),
    ],
)
def test_a_sentence_leaning_on_the_one_before_it_does_not_describe_a_topic(
    texts: list[str], expected: str
) -> None:
    assert _line("Dashboard", texts).startswith(expected)


@pytest.mark.parametrize(
    ("texts", "expected"),
    [
        (
            [
                "Clawk reply to gerundium on decision provenance: a signature proves custody. Decision logs "
                "capture why but must never be trusted alone, because the reason can be injected.",
                "Clawk returns a null id for some replies, because of an API quirk.",
            ],
            "Clawk returns",
        ),
        (
            [
                "Respuesta de Clawk a gerundium sobre decisiones: una firma prueba la custodia. Las decisiones "
                "registradas guardan el porqué pero nunca deben creerse solas, porque el porqué puede inyectarse.",
                "Clawk devuelve un id nulo en algunas respuestas, porque la API tiene esa rareza.",
            ],
            "Clawk devuelve",
        ),
        (
            [
                "Clawk 回复 gerundium 关于决策来源：签名只证明持有。决策日志记录原因，但绝不能单独信任，因为原因可能被注入。",
                "Clawk 对某些回复返回空 id，因为 API 有这个怪癖。",
            ],
            "Clawk 对某些回复",
        ),
    ],
)
def test_a_post_behind_a_label_does_not_describe_a_topic_through_the_sentence_after_it(
    texts: list[str], expected: str
) -> None:
    assert _line("Clawk", texts).startswith(expected)


@pytest.mark.parametrize(
    ("title", "texts", "expected"),
    [
        (
            "Grafana",
            [
                "Grafana alerts must go to the on-call channel, because email is read too late.",
                "Alerts must go to the on-call channel, because email is read too late.",
            ],
            "Grafana alerts",
        ),
        (
            "Grafana",
            [
                "Las alertas de Grafana deben ir al canal de guardia, porque el correo se lee tarde.",
                "Las alertas deben ir al canal de guardia, porque el correo se lee tarde.",
            ],
            "Las alertas de Grafana",
        ),
        (
            "部署",
            [
                "部署脚本失败时必须回滚到上一个版本，因为数据库不能停。",
                "脚本失败时必须回滚到上一个版本，因为数据库不能停。",
            ],
            "部署脚本",
        ),
    ],
)
def test_of_equal_statements_the_one_naming_the_topics_subject_describes_it(
    title: str, texts: list[str], expected: str
) -> None:
    assert _line(title, texts).startswith(expected)


# --- a path mentioned in passing names no topic (offline._in_passing) ---


@pytest.mark.parametrize(
    ("written", "fact", "passing"),
    [
        (
            "Please review the claude-dev-log-diary/day-002.md and find where I steered you wrong. "
            "Always push back when I steer you in a wrong way.",
            "Always push back when I steer you in a wrong way.",
            True,
        ),
        (
            "请先看 claude-dev-log-diary/day-002.md，然后告诉我哪里错了。以后我方向错了就要反驳。",
            "以后我方向错了就要反驳。",
            True,
        ),
        (
            "The claude-dev-log-diary/ folder is excluded from pre-commit hooks.",
            "The claude-dev-log-diary/ folder is excluded from pre-commit hooks.",
            False,  # the fact is about the folder
        ),
    ],
)
def test_a_path_the_fact_does_not_name_is_mentioned_in_passing(
    written: str, fact: str, passing: bool
) -> None:
    assert offline._in_passing("claude-dev-log-diary", written, fact) is passing
