"""The same statement gets the same verdict in every language (issue #14, item 1: "no rule
may rest on English words alone"). Each row is one kind of entry — a limit of a tool, a
stable fact with a version, an owner's preference told in the third person, an imperative
rule; and, not kept, a status snapshot with counts, a status with time remaining, a one-off
activity record, narration — written in English, Chinese, Korean and Japanese, and in German,
French, Spanish and Portuguese, which the lexicons cover too. Every translation must be kept,
or not kept, as the English one is. The entries are plain log items: no heading, label or
tag helps them."""

from __future__ import annotations

from datetime import date

import pytest

from gitdream.dream import salience
from gitdream.dream.salience import Cues, judge
from gitdream.engines.offline import clean_text
from gitdream.units import Entry

LANGUAGES = ("en", "zh", "ko", "ja", "de", "fr", "es", "pt")

TABLE: dict[str, tuple[bool, tuple[str, ...]]] = {
    "a limit of a tool": (
        True,
        (
            "- The API key expires after 24 hours.",
            "- API密钥24小时后过期。",
            "- API 키는 24시간 후에 만료된다.",
            "- APIキーは24時間後に期限切れになる。",
            "- Der API-Schlüssel läuft nach 24 Stunden ab.",
            "- La clé API expire après 24 heures.",
            "- La clave de la API caduca después de 24 horas.",
            "- A chave da API expira após 24 horas.",
        ),
    ),
    "a stable fact with a version": (
        True,
        (
            "- The staging cluster runs Kubernetes 1.29.",
            "- 预发布集群运行 Kubernetes 1.29。",
            "- 스테이징 클러스터는 Kubernetes 1.29를 실행한다.",
            "- ステージングクラスターは Kubernetes 1.29 で動いている。",
            "- Der Staging-Cluster läuft mit Kubernetes 1.29.",
            "- Le cluster de préproduction utilise Kubernetes 1.29.",
            "- El clúster de staging ejecuta Kubernetes 1.29.",
            "- O cluster de staging roda Kubernetes 1.29.",
        ),
    ),
    "an owner's preference told in the third person": (
        True,
        (
            "- The user prefers short commit messages.",
            "- 用户喜欢简短的提交信息。",
            "- 사용자는 짧은 커밋 메시지를 선호한다.",
            "- ユーザーは短いコミットメッセージを好む。",
            "- Der Nutzer bevorzugt kurze Commit-Nachrichten.",
            "- L'utilisateur préfère des messages de commit courts.",
            "- El usuario prefiere mensajes de commit cortos.",
            "- O usuário prefere mensagens de commit curtas.",
        ),
    ),
    "an imperative rule": (
        True,
        (
            "- Use blue-green deploys for the API.",
            "- 使用蓝绿部署发布 API。",
            "- API에는 블루-그린 배포를 사용하라.",
            "- API にはブルーグリーンデプロイを使ってください。",
            "- Verwende Blue-Green-Deployments für die API.",
            "- Utilisez des déploiements blue-green pour l'API.",
            "- Usa despliegues blue-green para la API.",
            "- Use implantações blue-green para a API.",
        ),
    ),
    "a status snapshot with counts": (
        False,
        (
            "- Inbox: 11 matches, 0 unread, 180 discover.",
            "- 收件箱：11 个匹配，0 未读，180 个发现。",
            "- 받은편지함: 매치 11건, 읽지 않음 0건, 발견 180건.",
            "- 受信箱：マッチ11件、未読0件、発見180件。",
            "- Posteingang: 11 Treffer, 0 ungelesen, 180 entdeckt.",
            "- Boîte de réception : 11 correspondances, 0 non lus, 180 découvertes.",
            "- Bandeja de entrada: 11 coincidencias, 0 sin leer, 180 por descubrir.",
            "- Caixa de entrada: 11 correspondências, 0 não lidas, 180 descobertas.",
        ),
    ),
    "a status with time remaining": (
        False,
        (
            "- Account suspended, 23h remaining.",
            "- 账号被暂停，剩余23小时。",
            "- 계정 정지, 23시간 남음.",
            "- アカウント停止中、残り23時間。",
            "- Konto gesperrt, noch 23 Stunden.",
            "- Compte suspendu, 23 h restantes.",
            "- Cuenta suspendida, quedan 23 horas.",
            "- Conta suspensa, faltam 23 horas.",
        ),
    ),
    "a one-off activity record": (
        False,
        (
            "- Replied to the thread about the outage.",
            "- 回复了关于故障的帖子。",
            "- 장애 관련 스레드에 답장했다.",
            "- 障害のスレッドに返信した。",
            "- Auf den Thread über den Ausfall geantwortet.",
            "- Répondu au fil sur la panne.",
            "- Respondí al hilo sobre la caída.",
            "- Respondi ao tópico sobre a queda.",
        ),
    ),
    "narration": (
        False,
        (
            "- Let me check the configuration file first.",
            "- 让我先看一下配置文件。",
            "- 먼저 설정 파일을 확인하겠습니다.",
            "- まず設定ファイルを確認します。",
            "- Lass mich zuerst die Konfigurationsdatei prüfen.",
            "- Laisse-moi d'abord vérifier le fichier de configuration.",
            "- Déjame revisar primero el archivo de configuración.",
            "- Deixe-me verificar primeiro o arquivo de configuração.",
        ),
    ),
}


def verdict(text: str) -> salience.Judgement:
    entry = Entry("agents/ops/memory/logs/2026/05/2026-05-04.md", 1, 1, text, date(2026, 5, 4))
    return judge(entry, clean_text(entry, None), Cues(), salience.DEFAULT_THRESHOLD)


@pytest.mark.parametrize(
    ("kind", "language", "text", "kept"),
    [
        (kind, language, text, kept)
        for kind, (kept, texts) in TABLE.items()
        for language, text in zip(LANGUAGES, texts, strict=True)
    ],
)
def test_every_translation_gets_the_same_verdict(kind: str, language: str, text: str, kept: bool) -> None:
    judged = verdict(text)
    assert judged.kept is kept, (kind, language, judged)
