import unicodedata

import pytest

from gitdream.dream.slugs import MAX_BYTES, MAX_CHARS, MEMORY_RESERVED, WINDOWS_RESERVED, slugify

HOSTILE = [
    "../x",
    "..",
    ".",
    ".git",
    ".hidden",
    "CON",
    "con.txt",
    "Lpt9",
    "COM¹",
    "x" * 300,
    "日" * 300,
    "🔥🚀✨",
    "日本語のトピック",
    "Привет мир",
    "\u202eevil\u202c.md",
    "a\u200db\u200cc\u200bd\ufeffe",
    "a/b\\c",
    "   ",
    "",
    "MEMORY",
    "Memory.md",
    "archive",
    "logs/",
    "INDEX",
    "NUL\x00byte",
    "tab\there\nnewline\r",
    "C:\\Windows\\system32",
    "deploy: rollbacks & tags!",
    "Ⅻ ｆｕｌｌｗｉｄｔｈ",
    "हिन्दी विषय",
    "ß ÆØÅ İstanbul",
]


def _safe(slug: str) -> None:
    assert slug, "never empty"
    assert "/" not in slug and "\\" not in slug and "." not in slug
    assert not slug.startswith("-") and not slug.endswith("-") and "--" not in slug
    assert len(slug) <= MAX_CHARS and len(slug.encode("utf-8")) <= MAX_BYTES
    assert slug not in WINDOWS_RESERVED and slug not in MEMORY_RESERVED
    assert slug == slug.lower()
    assert all(unicodedata.category(ch)[0] in "LMN" or ch == "-" for ch in slug), slug
    assert all(unicodedata.category(ch) not in ("Cc", "Cf") for ch in slug)


@pytest.mark.parametrize("name", HOSTILE)
def test_slugify_hostile_names_are_safe(name: str) -> None:
    _safe(slugify(name))


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("../x", "x"),
        (".git", "git"),
        ("CON", "con-topic"),
        ("con.txt", "con-txt"),
        ("COM¹", "com1-topic"),
        ("Lpt9", "lpt9-topic"),
        ("🔥🚀✨", "topic"),
        ("   ", "topic"),
        ("", "topic"),
        ("日本語のトピック", "日本語のトピック"),
        ("Привет мир", "привет-мир"),
        ("\u202eevil\u202c", "evil"),
        ("a\u200db\u200cc\u200bd\ufeffe", "abcde"),
        ("a/b\\c", "a-b-c"),
        ("MEMORY", "memory-topic"),
        ("Memory.md", "memory-md"),
        ("archive", "archive-topic"),
        ("logs/", "logs-topic"),
        ("INDEX", "index-topic"),
        ("Deploy: Rollbacks & Tags!", "deploy-rollbacks-tags"),
        ("feedback_db_transactions", "feedback-db-transactions"),
        ("ｆｕｌｌｗｉｄｔｈ", "fullwidth"),
        ("Straße", "straße"),
    ],
)
def test_slugify_examples(name: str, expected: str) -> None:
    assert slugify(name) == expected


def test_slugify_caps_characters_and_bytes_on_a_character_boundary() -> None:
    assert slugify("x" * 300) == "x" * MAX_CHARS
    cjk = slugify("日" * 300)  # 3 bytes each: the byte cap (120) bites first
    assert cjk == "日" * (MAX_BYTES // 3)
    mixed = slugify("a" + "€" * 100)
    assert len(mixed.encode("utf-8")) <= MAX_BYTES
    mixed.encode("utf-8").decode("utf-8")  # cut on a character boundary


def test_slugify_trims_a_dash_left_at_the_cut() -> None:
    name = "a" * (MAX_CHARS - 1) + " tail"
    assert slugify(name) == "a" * (MAX_CHARS - 1)


def test_slugify_resolves_collisions_case_insensitively_and_deterministically() -> None:
    assert slugify("Deploy", {"Deploy"}) == "deploy-2"
    assert slugify("deploy", {"DEPLOY", "deploy-2"}) == "deploy-3"
    assert slugify("deploy", frozenset({"other"})) == "deploy"
    taken = {"deploy", "Deploy-2", "deploy-3"}
    assert slugify("Deploy", taken) == slugify("Deploy", set(taken)) == "deploy-4"


def test_slugify_collision_suffix_still_fits_the_caps() -> None:
    long = "x" * 300
    first = slugify(long)
    second = slugify(long, {first})
    assert second.endswith("-2")
    _safe(second)
    taken = {first} | {f"{'x' * (MAX_CHARS - len(f'-{n}'))}-{n}" for n in range(2, 12)}
    eleventh = slugify(long, taken)
    assert eleventh.endswith("-12")
    _safe(eleventh)


def test_slugify_reserved_fallback_collides_too() -> None:
    assert slugify("MEMORY", {"memory-topic"}) == "memory-topic-2"
    assert slugify("!!!", {"topic"}) == "topic-2"
