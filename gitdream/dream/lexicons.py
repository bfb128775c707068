"""The cue words of salience, per language, and how they are matched.

Each list holds words for English, Chinese, Korean and Japanese, then Spanish, German,
French and Portuguese (in that order in the source): general words of the language for what an entry is — a lesson, a rule, a
reason, a status, an activity — never words taken from the logs the weights were fitted
on (`bench/fit_salience.py`). Words of a script that separates words with spaces (Latin,
accented or not: "siempre", "corrección", "müssen") match whole words and phrases,
case-insensitively; Chinese, Japanese and Korean ones match as substrings of the
NFKC-normalised text (those scripts do not separate words, or attach particles to them). `Cues` is the set in use, with the words a
repository adds (`offline.keep_cues`, `offline.skip_cues`).

False friends between the languages are kept apart by the words themselves: Portuguese
"todavia" (however) is a caveat, Spanish "todavía" (still) a status; French "toujours" and
German "immer" are "always" in a rule but "still" in "toujours pas", "toujours suspendu",
"immer noch", which `PERSISTENCE_WORDS` holds (the rule, generic and standing words are
looked for without them). German nouns are written in lower case (the match ignores case);
verbs in the forms a log uses (participles, present third person, the French infinitive of
a note's instruction, first-person past for Spanish and Portuguese records).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field


def _words(*groups: str) -> tuple[str, ...]:
    return tuple(w for g in groups for w in g.split("|") if w)


# --- cue lexicons, per language (English | Chinese | Korean | Japanese | Spanish | German |
# French | Portuguese) -------------------------------------------------------------------------
# Spaced-script words match whole words (case-insensitive); CJK ones match as substrings.

STRONG_LESSON_WORDS = _words(
    "lesson|lessons|learned|learnt|learning|learnings|takeaway|takeaways|rule|rules|"
    "decision|decisions|decided|gotcha|gotchas|caveat|caveats|pitfall|pitfalls|"
    "insight|insights|finding|findings|key finding|important|warning|remember|principle|"
    "principles|guideline|guidelines|convention|conventions|policy|constraint|constraints|"
    "limitation|limitations|root cause|workaround|how to|howto|faq|preference|preferences|"
    "feedback|correction|corrections|known issue|known issues|requirements|requirement|"
    "specification|best practices|instructions|standing orders|directive|directives|"
    "style guide|quirk|quirks",
    "教训|经验|心得|决定|决策|规则|规范|注意事项|要点|结论|发现|原则|约定|限制|偏好|反馈|更正|"
    "纠正|需求|最佳实践|指令|踩坑",
    "교훈|배운 점|배운점|결정|규칙|주의사항|원칙|규약|제약|제한|발견|결론|선호|피드백|정정|교정|"
    "요구사항|모범 사례|지침|지시",
    "教訓|学び|決定|方針|ルール|規則|注意点|要点|結論|知見|発見|原則|規約|制約|制限|好み|"
    "フィードバック|訂正|要件|ベストプラクティス|指示",
    "lección|lecciones|aprendido|aprendizaje|aprendizajes|regla|reglas|decisión|decisiones|decidido|importante|advertencia|principio|principios|política|restricción|restricciones|limitación|limitaciones|preferencia|preferencias|corrección|correcciones|requisito|requisitos|buenas prácticas|instrucciones|conclusión|conclusiones",
    "lektion|lektionen|gelernt|erkenntnis|erkenntnisse|regel|regeln|entscheidung|entscheidungen|entschieden|wichtig|warnung|prinzip|prinzipien|richtlinie|richtlinien|einschränkung|einschränkungen|vorliebe|korrektur|korrekturen|anforderungen|fazit",
    "leçon|leçons|appris|enseignement|enseignements|règle|règles|décision|décisions|décidé|avertissement|principe|principes|politique|contrainte|contraintes|préférence|préférences|exigences|bonnes pratiques|consignes",
    "lição|lições|aprendizado|regra|regras|decisão|decisões|aviso|princípio|princípios|restrição|restrições|limitação|preferência|preferências|correção|correções|boas práticas|instruções|conclusão",
)
WEAK_LESSON_WORDS = _words(
    "note|notes|tip|tips|fix|issue|issues|problem|problems|mistake|mistakes|reference|setup|"
    "configuration|config|usage|commands|tools|"
    "environment|glossary|contacts|people|overview|about|api|limits|concepts|definitions|"
    "practices|design|architecture|style|spec|owner",
    "注意|技巧|原因|解决|问题点|失误|备忘|架构|设计|配置|用法|命令|工具|环境|术语|联系人|概述|说明",
    "주의|메모|팁|원인|해결|문제점|실수|참고|구조|설계|설정|사용법|명령어|도구|환경|용어|연락처|개요",
    "注意|コツ|原因|解決|問題点|ミス|メモ|備忘|構成|設計|設定|使い方|コマンド|ツール|環境|用語|連絡先|概要",
    "nota|notas|consejo|consejos|problema|problemas|errores|referencia|configuración|comandos|herramientas|entorno|glosario|contactos|diseño|arquitectura",
    "notiz|notizen|tipp|tipps|fehler|referenz|einrichtung|konfiguration|befehle|werkzeuge|umgebung|glossar|kontakte|architektur",
    "astuce|astuces|problème|problèmes|erreur|erreurs|référence|utilisation|commandes|outils|environnement|glossaire|conception",
    "dica|dicas|erro|erros|referência|configuração|ferramentas|ambiente|glossário|contatos|arquitetura",
)
LESSON_WORDS = STRONG_LESSON_WORDS + WEAK_LESSON_WORDS
READING_WORDS = _words(
    "research|reading|read|paper|papers|study|studies|literature|article|articles",
    "研究|论文|阅读|文献",
    "연구|논문|독서|문헌",
    "研究|論文|読書|文献",
    "investigación|lectura|lecturas|artículo|artículos|estudio|estudios|literatura",
    "forschung|lektüre|artikel|studie|studien|literatur|aufsatz|aufsätze",
    "recherche|recherches|lecture|lectures|article|articles|étude|études|littérature",
    "pesquisa|pesquisas|leitura|leituras|artigo|artigos|estudo|estudos|literatura",
)
STATUS_HEADING_WORDS = _words(
    "status|checks|check|writing|actions|activity|likes|replies|engagement|progress|done|"
    "completed|changelog|stats|statistics|metrics|totals|summary|inbox|notifications|updates|"
    "update|log|timeline|recap|heartbeat|session",
    "状态|进度|进展|完成|动态|统计|汇总|回顾|日志|记录",
    "상태|진행|진행 상황|완료|활동|통계|요약|기록|로그|작업 내역",
    "状態|状況|進捗|完了|活動|統計|まとめ|記録|ログ|作業",
    "estado|progreso|avance|completado|resumen|estadísticas|métricas|totales|bandeja de entrada|notificaciones|actualizaciones|actualización|registro|bitácora|sesión|actividad|actividades|cronología",
    "stand|fortschritt|erledigt|abgeschlossen|zusammenfassung|statistik|statistiken|metriken|posteingang|benachrichtigungen|aktualisierungen|protokoll|verlauf|sitzung|aktivität|aktivitäten|änderungsprotokoll",
    "état|statut|progrès|avancement|terminé|résumé|statistiques|métriques|totaux|boîte de réception|notifications|mises à jour|mise à jour|journal|séance|activité|activités|bilan|récapitulatif|chronologie",
    "estado|progresso|andamento|concluído|feito|resumo|estatísticas|métricas|totais|caixa de entrada|notificações|atualizações|atualização|registro|sessão|atividade|atividades|cronologia",
)
PLAN_HEADING_WORDS = _words(
    "todo|to-do|to do|next|next steps|plan|plans|planned|tomorrow|backlog|ideas|queue|targets|"
    "goals|agenda|upcoming|follow-up|follow-ups|followups|open questions|questions",
    "计划|待办|下一步|明天|目标|待定|想法|问题",
    "계획|할 일|할일|다음|다음 단계|내일|목표|예정|아이디어|질문",
    "予定|計画|次に|次回|次の|明日|目標|やること|課題|アイデア|質問",
    "pendiente|pendientes|próximos pasos|por hacer|objetivos",
    "nächste schritte|geplant|ziele|offen",
    "à faire|prochaines étapes|demain|objectifs|prévu",
    "pendente|próximos passos|amanhã|a fazer",
)
RULE_WORDS = _words(
    "must|must not|never|always|don't|do not|dont|shouldn't|should not|avoid|"
    "make sure|required|cannot|can't|not allowed|forbidden|prohibited|remember to|beware|"
    "mandatory|only works|doesn't work|does not work|reminder|don't forget|keep in mind|"
    "note that|the correct approach|the right approach|the right way|the correct way",
    "必须|务必|不要|不能|不可|禁止|避免|应该|应当|总是|始终|永远|一定要|只能|需要|记得|切勿|千万|优先|都要|一律",
    "반드시|꼭|항상|절대|하지 마|하지 말|말 것|말아야|금지|피해야|피할 것|해야|해야 한다|"
    "해야 함|야 한다|야 함|야 합니다|할 것|하면 안|안 된다|안 됨|필수|주의|우선",
    "必ず|常に|絶対|しないこと|してはいけない|してはならない|禁止|避ける|避けること|べき|"
    "すること|しなければ|必要|必須|注意|優先|こと。",
    "siempre|nunca|jamás|hay que|no hay que|debe|deben|debes|no debe|se debe|tiene que|tienen que|no se puede|prohibido|obligatorio|asegúrate|recuerda|no olvides|solo funciona|no funciona|necesita|necesitan",
    "immer|nie|niemals|muss|müssen|musst|darf nicht|dürfen nicht|nicht erlaubt|verboten|vermeiden|sicherstellen|denk daran|nicht vergessen|funktioniert nicht",
    "toujours|jamais|il faut|il ne faut pas|doit|doivent|ne doit pas|interdit|obligatoire|éviter|assurez-vous|n'oubliez pas|ne fonctionne pas|nécessaire",
    "sempre|tem que|têm que|deve|devem|não deve|não pode|proibido|obrigatório|certifique-se|lembre-se|não esqueça|não funciona|precisa|precisam",
)
PROCEDURE_WORDS = _words(
    "before|after|first|then|once|whenever|every time|each time|until|unless",
    "之前|之后|以后|首先|然后|每次|除非",
    "전에|후에|먼저|다음에|매번|때마다|하기 전|한 후",
    "前に|後に|まず|その後|毎回|たびに|までは",
    "antes de|después de|primero|luego|después|una vez que|cada vez|cada vez que|siempre que|hasta que|a menos que|salvo que",
    "vor|bevor|nach|nachdem|zuerst|zunächst|erst|dann|danach|anschließend|jedes mal|sobald|wann immer|bis|es sei denn",
    "avant|avant de|après|d'abord|puis|ensuite|une fois que|chaque fois|à chaque fois|dès que|jusqu'à ce que|à moins que|sauf si",
    "antes|antes de|depois|depois de|primeiro|então|uma vez que|cada vez|toda vez|sempre que|até que|a menos que|exceto se",
)
WEAK_RULE_WORDS = _words(
    "should|ensure|requires|require|prefer|favor|favour|careful|fails|fail|breaks|won't|need|needs|only",
    "最好|尽量|会失败",
    "좋다|권장|실패",
    "ほうがいい|推奨|失敗",
    "debería|deberían|conviene|cuidado|requiere|falla|prefiere|prefieren",
    "sollte|sollten|besser|vorsicht|erfordert|benötigt|scheitert|nur|bevorzugt",
    "devrait|devraient|mieux|attention|nécessite|échoue|seulement|préfère|préfèrent",
    "deveria|deveriam|requer|falha|somente|apenas|prefere|preferem",
)
REASON_WORDS = _words(
    "because|since|so that|due to|caused by|root cause|the reason|which means|otherwise|"
    "therefore|hence|as a result|that's why|leads to|results in|so it|in order to|"
    "to prevent|to avoid|to ensure|ensuring|prevents|which prevents|causing|"
    "caused|the point of|purpose|reason|why",
    "因为|由于|所以|因此|导致|原因|以免|否则|以便|为了|防止|避免|目的",
    "때문에|때문|므로|으므로|이므로|위해|위하여|원인|이유|그래서|따라서|그러므로|않으면|방지|목적",
    "ため|ので|から。|原因|理由|結果|そのため|したがって|さもないと|ように|防ぐ|目的",
    "porque|ya que|debido a|para que|por eso|por lo tanto|así que|causado por|razón|motivo|de lo contrario",
    "weil|damit|deshalb|daher|deswegen|sonst|andernfalls|wegen|grund|ursache|führt zu",
    "parce que|puisque|afin de|pour que|donc|sinon|à cause de|raison|provoque",
    "pois|já que|por isso|portanto|senão|caso contrário|devido a|razão",
)
CORRECTION_WORDS = _words(
    "actually|turns out|turned out|in fact|no longer|was wrong|"
    "is wrong|incorrect|correction|corrected|misread|mistake|myth|debunked|contrary to|"
    "wasn't|isn't really|not a|not the",
    "其实|原来|不是|而是|并非|更正|纠正|是错的|是错误的|记错|误解|不再",
    "아니라|아니다|사실은|사실|실제로|정정|잘못|오해|더 이상",
    "ではなく|じゃなく|実は|実際は|訂正|誤り|間違い|誤解|もう",
    "corrección|en realidad|resulta que|ya no|estaba mal|está mal|incorrecto|sino",
    "korrektur|eigentlich|tatsächlich|stellt sich heraus|nicht mehr|stattdessen|war falsch|ist falsch|sondern",
    "en fait|en réalité|il s'avère|était faux|est faux|n'est plus",
    "correção|na verdade|acontece que|estava errado|está errado|incorreto|mas sim",
)
COMPARISON_WORDS = _words(
    "instead of|rather than|in favor of|in favour of|in place of",
    "而不是|代替|取代",
    "대신|대신에",
    "代わりに",
    "en vez de|en lugar de|antes que",
    "statt|anstatt|anstelle von|an stelle von",
    "au lieu de|plutôt que|à la place de",
    "em vez de|ao invés de|no lugar de",
)
"""Words that set one thing against another ("X instead of Y", "au lieu de", "statt"): a
correction when what is set aside is a way or a thing ("use `rsync` instead of `cp`"),
a measurement when both are quantities ("copies 640 files instead of 90")
(`gitdream.dream.salience`: only the first is a correction)."""
PERSISTENCE_WORDS = _words(
    "still not|still no|still doesn't|still does not|still don't|still do not|still isn't|"
    "still is not|still aren't|still can't|still cannot|still won't|still unable|not yet",
    "仍然不|仍然没|仍未|还是不|还是没|还没|还不|尚未|依然不|依然没",
    "아직 안|아직도 안|아직 못|아직도 못|여전히 안|여전히 못|아직",
    "まだ|未だに|いまだに",
    "todavía no|todavía sin|aún no|aún sin|sigue sin|siguen sin",
    "immer noch|noch immer|noch nicht|immer noch nicht|noch immer nicht|weiterhin nicht",
    "toujours pas|toujours aucun|toujours aucune|toujours rien|toujours personne|toujours en attente|toujours en panne|pas encore|"
    "toujours suspendu|toujours suspendue|toujours bloqué|toujours bloquée|toujours banni|toujours bannie|toujours en panne|toujours indisponible|toujours hors ligne|toujours en cours|toujours désactivé|toujours désactivée|toujours inactif|toujours inactive|toujours expiré|toujours expirée|toujours en pause",
    "ainda não|ainda sem|continua sem|continuam sem|ainda nada|ainda nenhum|ainda nenhuma",
)
"""Words of a state that persists ("still not", "toujours pas", "immer noch", "todavía no",
"ainda não", 还没, 아직 안, まだ): a status. In them a word that elsewhere makes a rule
("toujours", "immer", "不", "안 된다") is no rule: the rule, generic and standing words are
looked for in the text without them (`gitdream.dream.salience`)."""
LIMIT_WORDS = _words(
    "limit|limits|limited|max|maximum|minimum|cap|capped|quota|cooldown|timeout|"
    "rate limit|at most|up to|no more than|at least|exceeds|exceed|per|threshold|allowed",
    "上限|下限|限制|最多|最少|至少|不超过|超过|冷却|超时|每个|每次|每天|每小时|每分钟",
    "제한|최대|최소|이하|이상|초과|한도|쿨다운|타임아웃|시간당|분당|건당|회당",
    "上限|下限|制限|最大|最小|以下|以上|超過|クールダウン|タイムアウト|ごと|あたり",
    "límite|límites|limitado|limitada|máximo|como máximo|mínimo|al menos|como mínimo|no más de|cuota|supera",
    "begrenzt|maximal|höchstens|mindestens|nicht mehr als|kontingent|überschreitet",
    "limite|limité|limitée|au plus|au maximum|au moins|pas plus de|dépasse",
    "limitado|limitada|no máximo|no mínimo|pelo menos|não mais que|cota|excede",
)
PREFERENCE_WORDS = _words(
    "prefer|prefers|preferred|dislike|dislikes|don't like|do not like|like it|i like|i want|"
    "i'd like|i would like|i don't want|i do not want|please always|please never|hate|wish|"
    "i plan|my name|i am|i'm not|i think we should|we should|let's not|rather",
    "喜欢|不喜欢|讨厌|希望|偏好|想要|不想|我是|我们应该|请总是|请不要",
    "좋아|싫어|선호|원해|원합니다|원하지|바랍니다|제 이름|저는|우리는|해 주세요|하지 말아",
    "好き|嫌い|好む|希望|してほしい|しないでほしい|私は|私の名前|べきだと思|ください",
    "prefiere|prefieren|prefiero|no le gusta|quiere que|quieren que",
    "bevorzugt|bevorzuge|möchte|lieber",
    "préfère|préfèrent|n'aime pas|veut que|souhaite",
    "prefere|preferem|prefiro|não gosta|quer que",
)
OWNER_WORDS = _words(
    "user|owner|maintainer|operator|human",
    "用户|主人|所有者|维护者|老板",
    "사용자|유저|주인|오너|관리자",
    "ユーザー|オーナー|持ち主|管理者|メンテナー|ご主人",
    "usuario|usuaria|dueño|dueña|propietario|propietaria",
    "nutzer|nutzerin|benutzer|benutzerin|besitzer|besitzerin|eigentümer|eigentümerin|inhaber",
    "utilisateur|utilisatrice|propriétaire|mainteneur",
    "usuário|usuária|utilizador|utilizadora|dono|dona|proprietário|proprietária",
)
"""Who an agent works for, named in the third person ("the user", 用户, 사용자, ユーザー)."""
PREFERS_WORDS = _words(
    "prefers|likes|dislikes|hates|wants|doesn't like|does not like|doesn't want|does not want|would rather",
    "喜欢|不喜欢|讨厌|偏好|倾向于|希望|想要|不想要",
    "선호|좋아한다|좋아함|싫어한다|싫어함|원한다|원함|원하지 않|바란다",
    "好む|好き|嫌い|希望する|望む|ほしい|欲しい",
    "prefiere|le gusta|le gustan|no le gusta|no le gustan|odia|quiere",
    "bevorzugt|mag|mag keine|möchte|hasst|wünscht",
    "préfère|aime|n'aime pas|déteste|veut|souhaite",
    "prefere|gosta|não gosta|odeia|quer",
)
"""A preference told of someone else, in the present ("prefers", 喜欢, 선호한다, 好む,
"bevorzugt", "préfère"): after an owner word (`OWNER_WORDS`), a standing preference."""
STATUS_WORDS = _words(
    "unread|no new|nothing new|still|remaining|pending|waiting|currently|so far|successfully|"
    "as of|expires|expired|running total|notifications|no response|no reply|no replies|"
    "0 replies|engagement",
    "未读|没有新|暂无|仍然|还在|还是不|还是没|还没|还不|仍未|尚未|依然|剩余|剩下|等待|目前|当前|截至|在线|离线|总计|共计|成功",
    "읽지 않은|새로운 것 없|새 글 없|없음|아직|여전히|남은|대기|현재|지금까지|기준|온라인|오프라인|총|합계|성공적으로",
    "未読|新着なし|まだ|依然|残り|待機|現在|今のところ|時点|オンライン|オフライン|合計|正常に",
    "sin leer|no leído|no leídos|no leídas|nada nuevo|sin novedades|todavía|todavía no|aún|aún no|sigue sin|siguen sin|sigue siendo|restante|restantes|quedan|pendiente|pendientes|esperando|en espera|actualmente|hasta ahora|con éxito|caduca|caducado|expira|expiró|sin respuesta|sin respuestas|ninguna respuesta",
    "ungelesen|ungelesene|nichts neues|keine neuen|noch|immer noch|noch immer|noch nicht|verbleibend|übrig|ausstehend|wartet|warten auf|derzeit|momentan|zurzeit|bisher|bislang|erfolgreich|läuft ab|abgelaufen|keine antwort|keine antworten",
    "non lu|non lus|non lue|non lues|rien de nouveau|aucun nouveau|aucune nouvelle|toujours pas|toujours suspendu|toujours suspendue|toujours bloqué|toujours bloquée|toujours banni|toujours bannie|toujours en panne|toujours indisponible|toujours hors ligne|toujours en cours|toujours désactivé|toujours désactivée|toujours inactif|toujours inactive|toujours expiré|toujours expirée|toujours en pause|toujours aucun|toujours aucune|toujours rien|toujours en attente|pas encore|encore|restant|restants|restante|restantes|en attente|actuellement|jusqu'ici|jusqu'à présent|avec succès|expire|expiré|expirée|sans réponse|aucune réponse",
    "não lido|não lidos|não lida|não lidas|nada de novo|sem novidades|ainda|ainda não|ainda sem|continua sem|restante|restantes|faltam|pendente|pendentes|aguardando|esperando|atualmente|até agora|com sucesso|expira|expirou|expirado|sem resposta|sem respostas|nenhuma resposta",
)
STATE_WORDS = _words(
    "suspended|banned|unbanned|blocked|unblocked|lifted|restored|down|offline|online|active|"
    "inactive|enabled|disabled|available|unavailable|locked|unlocked|expired|paused|resumed|"
    "deprecated|outage|healthy|degraded",
    "暂停|封禁|解封|封号|停用|启用|恢复|下线|上线|离线|在线|不可用|可用|已过期|锁定|解锁",
    "정지|차단|해제|복구|중단|비활성|활성|오프라인|온라인|사용 불가|만료|잠금",
    "停止中|凍結|解除|復旧|停止|無効|有効|オフライン|オンライン|利用不可|期限切れ|ロック",
    "suspendido|suspendida|baneado|baneada|bloqueado|bloqueada|desbloqueado|desbloqueada|levantado|levantada|restaurado|restaurada|caído|caída|activo|activa|inactivo|inactiva|habilitado|habilitada|deshabilitado|deshabilitada|disponible|no disponible|caducado|caducada|pausado|pausada|reanudado|reanudada|obsoleto|obsoleta|en línea|fuera de línea|interrupción",
    "gesperrt|entsperrt|gebannt|aufgehoben|wiederhergestellt|ausgefallen|aktiv|inaktiv|aktiviert|deaktiviert|verfügbar|nicht verfügbar|nicht erreichbar|abgelaufen|pausiert|fortgesetzt|veraltet|störung|ausfall|suspendiert",
    "suspendu|suspendue|banni|bannie|bloqué|bloquée|débloqué|débloquée|levée|rétabli|rétablie|restauré|restaurée|en panne|hors ligne|en ligne|actif|inactif|inactive|activé|activée|désactivé|désactivée|disponible|indisponible|expiré|expirée|en pause|obsolète|panne",
    "suspenso|suspensa|banido|banida|bloqueado|bloqueada|desbloqueado|desbloqueada|restaurado|restaurada|fora do ar|ativo|ativa|inativo|inativa|ativado|ativada|desativado|desativada|disponível|indisponível|expirado|expirada|pausado|pausada|retomado|retomada|obsoleto|obsoleta|instável|interrupção",
)
"""Words that say which state a thing is in ("suspended", "ban lifted", "封禁", "정지"): a
value under a label that only names its subject states the subject's state when it holds
one (`supersede`: a newer state replaces an older one)."""
ACTIVITY_WORDS = _words(
    "replied|reply|posted|post|sent|send|liked|like|submitted|commented|comment|"
    "shared|published|followed|upvoted|voted|rated|emailed|messaged|pinged|checked|ran|"
    "committed|pushed|merged|deployed|installed|tested|created|added|updated|removed|fixed|"
    "wrote|read|reviewed|started|finished|completed|attempted|tried|retried|opened|closed|"
    "scanned|logged|engaged|engaging|adopted|built",
    "回复了|发布了|发送了|点赞|提交了|评论了|已发送|已回复|已完成|完成了|做了|检查了|运行了|"
    "创建了|添加了|更新了|修复了|删除了",
    "했다|했음|했습니다|완료|답장|회신|게시|보냈|전송|작성함|작성했|확인함|확인했|실행함|"
    "실행했|추가함|추가했|수정함|수정했|삭제함|삭제했|생성함|생성했",
    "しました|した。|完了|返信|投稿|送信|確認した|実行した|追加した|修正した|削除した|作成した",
    "respondí|respondió|respondido|publiqué|publicó|publicado|envié|envió|enviado|añadí|añadió|añadido|agregué|agregado|actualicé|actualizó|actualizado|creé|creó|creado|eliminé|eliminó|eliminado|borré|borrado|corregí|corrigió|corregido|revisé|revisó|revisado|comprobé|comprobó|comprobado|ejecuté|ejecutó|ejecutado|instalé|instaló|instalado|probé|probó|probado|desplegué|desplegó|desplegado|hice|hizo|hecho|terminé|terminó|terminado|completé|completó|completado|empecé|empezó|inicié|inició|iniciado|abrí|abrió|abierto|cerré|cerró|cerrado|escribí|escribió|escrito|leí|leyó|leído|llamé|llamó|llamado|comenté|comentó|comentado|compartí|compartió|compartido|subí|subió|subido|fusioné|fusionado|intenté|intentó|intentado|configuré|configurado",
    "habe|geantwortet|beantwortet|gepostet|veröffentlicht|gesendet|gesandt|geschickt|verschickt|hinzugefügt|ergänzt|aktualisiert|erstellt|angelegt|gelöscht|entfernt|behoben|korrigiert|geprüft|überprüft|kontrolliert|getestet|installiert|ausgeführt|deployt|gemergt|committet|gepusht|geschrieben|gelesen|gestartet|beendet|abgeschlossen|versucht|geöffnet|geschlossen|kommentiert|geteilt|eingerichtet|konfiguriert|aufgeräumt|hochgeladen|angerufen",
    "j'ai|répondu|publié|envoyé|ajouté|créé|supprimé|corrigé|vérifié|contrôlé|testé|installé|déployé|lancé|exécuté|fusionné|poussé|écrit|relu|terminé|fini|commencé|démarré|essayé|ouvert|fermé|commenté|partagé|rédigé|nettoyé|configuré|appelé|téléversé",
    "respondi|respondeu|respondido|publiquei|publicou|publicado|enviei|enviou|enviado|adicionei|adicionou|adicionado|atualizei|atualizou|atualizado|criei|criou|criado|removi|removeu|removido|apaguei|apagou|apagado|corrigi|corrigiu|corrigido|verifiquei|verificou|verificado|testei|testou|testado|instalei|instalou|instalado|implantei|implantou|executei|executou|executado|escrevi|escreveu|escrito|revisei|revisou|revisado|terminei|terminou|terminado|concluí|concluiu|concluído|comecei|começou|iniciei|iniciou|tentei|tentou|abri|abriu|fechei|fechou|comentei|comentou|compartilhei|compartilhou|fiz|fez|rodei|rodou|subi|mesclei|configurei|configurou|liguei|ligou",
)
PLAN_WORDS = _words(
    "todo|to-do|next|next step|next steps|plan|plans|planning|will|going to|gonna|tomorrow|"
    "later|soon|need to|needs to|should try|try to|want to|intend|for then|queued|upcoming",
    "计划|打算|准备|将要|待办|下一步|明天|稍后|之后|要去",
    "계획|예정|할 예정|하려고|할 것이다|할게|다음에|다음 단계|내일|나중에|곧",
    "予定|つもり|するつもり|次に|次のステップ|明日|後で|これから|しよう",
    "pendiente|próximo paso|próximos pasos|plan|planes|planeo|planeamos|voy a|vamos a|mañana|más tarde|pronto|intentaré|intentar|quiero|queremos|por hacer|haré|haremos",
    "todo|nächster schritt|nächste schritte|plan|pläne|geplant|werde|ich werde|wir werden|morgen|später|bald|demnächst|als nächstes|vorhaben|muss noch|will",
    "à faire|prochaine étape|prochaines étapes|plan|plans|prévu|prévue|je vais|nous allons|on va|demain|plus tard|bientôt|il faudra|à venir|je ferai|nous ferons",
    "a fazer|próximo passo|próximos passos|plano|planos|planejado|planejada|vou|vamos|amanhã|mais tarde|em breve|pretendo|pretendemos|farei|faremos|quero",
)
NARRATION_WORDS = _words(
    "let me|let's|let us|i'll|i will|i'm going to|i am going to|now i|now let|now i'll|"
    "great|perfect|excellent|awesome|sure|okay|ok|alright|i see|i've|i have|i can see|"
    "you're right|you're absolutely right|looks like|it seems|here's|here is|i'm|i am|i need|"
    "based on my|i understand|i notice|i found|i apologize|thanks|thank you",
    "让我|我来|我将|我会|好的|现在我|我们来|首先|我已经|我发现|看起来",
    "하겠습니다|보겠습니다|할게요|해볼게요|볼게요|좋습니다|알겠습니다|먼저|이제|네,|확인해",
    "しましょう|します。|してみます|確認します|了解|わかりました|まず|では、|見てみ",
    "déjame|voy a|vamos a|ahora voy|perfecto|excelente|genial|claro|vale|de acuerdo|entendido|veo que|parece que|aquí está|aquí tienes|ya he|tienes razón|gracias",
    "lass mich|ich werde|jetzt werde ich|perfekt|ausgezeichnet|super|okay|alles klar|verstanden|ich sehe|ich habe|hier ist|sieht so aus|es scheint|du hast recht|danke|vielen dank",
    "laisse-moi|laissez-moi|je vais|nous allons|maintenant je|parfait|excellent|super|d'accord|bien sûr|entendu|je vois|j'ai|voici|il semble|on dirait|vous avez raison|tu as raison|merci",
    "deixe-me|deixa eu|vou|vamos|agora vou|perfeito|ótimo|excelente|claro|certo|entendi|entendido|vejo que|parece que|aqui está|você tem razão|obrigado|obrigada",
)
ACKNOWLEDGEMENT_WORDS = _words(
    "noted|got it|understood|understand|ok|okay|sure|alright|all right|will do|of course|certainly|"
    "absolutely|acknowledged|roger|perfect|great|thanks|thank you|sounds good|makes sense",
    "好的|好|了解|明白了|明白|收到|知道了|没问题",
    "알겠습니다|알겠어요|알겠음|네|넵|확인했습니다|좋습니다|물론입니다",
    "了解です|了解しました|了解|承知しました|かしこまりました|わかりました|分かりました|はい",
    "entendido|de acuerdo|vale|claro|anotado|perfecto",
    "verstanden|alles klar|in ordnung|notiert",
    "compris|d'accord|noté|entendu|parfait|très bien",
    "certo|anotado|combinado|perfeito",
)
"""Words that open a turn acknowledging the other's ("Noted:", "Got it,", "好的，", "了解。",
"알겠습니다.", "承知しました。"), per language: the turn's content follows them
(`offline.without_acknowledgement`, which drops them from a fact's text)."""

FUTURE_WORDS = _words(
    "i'll|we'll|i will|we will|i'm going to|we're going to|let me|let's|let us",
    "我会|我将|我们会|我们将|让我|我来|我们来",
    "하겠습니다|할게요|할 것입니다|해 보겠습니다|하려고 합니다",
    "します|しましょう|する予定|するつもり|してみます",
    "voy a|vamos a|haré|haremos|déjame|vamos",
    "ich werde|wir werden|werde ich|werden wir|lass mich|lasst uns",
    "je vais|nous allons|on va|je ferai|nous ferons|laisse-moi|laissez-moi|allons",
    "vou|vamos|farei|faremos|deixe-me|deixa eu|irei",
)
"""The speaker's own next steps ("I'll prepare …:"): a lead-in in these words opens a plan."""
MOMENT_WORDS = _words(
    "right now|for now|at this time|at the moment|this time|for today|this session|so far today|"
    "today|tonight|this morning|this afternoon|this week",
    "现在|暂时|目前|今天|这次|本次",
    "지금|당분간|이번에는|이번|오늘",
    "今は|今回は|今回|当面|今日|今のところ",
    "ahora mismo|por ahora|de momento|por el momento|en este momento|esta vez|hoy|esta noche|esta mañana|esta tarde|esta semana|en esta sesión",
    "gerade jetzt|im moment|momentan|zurzeit|vorerst|fürs erste|diesmal|dieses mal|heute|heute abend|heute morgen|heute nachmittag|diese woche|in dieser sitzung",
    "en ce moment|pour l'instant|pour le moment|cette fois|aujourd'hui|ce soir|ce matin|cet après-midi|cette semaine|cette session|pour aujourd'hui",
    "agora mesmo|por enquanto|por ora|no momento|neste momento|desta vez|hoje|esta noite|esta manhã|esta tarde|esta semana|nesta sessão",
)
"""Words that bound a statement to the moment: what holds for now is not a standing fact."""
GENERIC_WORDS = _words(
    "by default|default|always|every|each|any|whenever|usually|typically|generally|"
    "commonly|common|often|normally|in general|tends to|never",
    "默认|通常|一般|总是|每次|每个|任何|往往|经常",
    "기본적으로|기본값|보통|일반적으로|항상|매번|흔히|자주",
    "デフォルト|既定|通常|一般的|常に|毎回|よく|たいてい",
    "por defecto|por omisión|siempre|cada|cualquier|cada vez que|siempre que|normalmente|habitualmente|generalmente|en general|a menudo|suele|suelen|nunca",
    "standardmäßig|immer|jede|jeder|jedes|jeden|jedes mal|wann immer|normalerweise|üblicherweise|meistens|in der regel|generell|grundsätzlich|oft|häufig|nie|niemals",
    "par défaut|toujours|chaque|tous les|toutes les|n'importe quel|chaque fois|normalement|habituellement|généralement|en général|d'habitude|souvent|jamais",
    "por padrão|sempre|cada|qualquer|toda vez|sempre que|normalmente|geralmente|em geral|frequentemente|muitas vezes|costuma|costumam|nunca",
)
"""Words of a generic statement — what holds in general, by default, every time."""
CONTRAST_WORDS = _words(
    "but|however|although|though|despite|except|whereas|only if|even if|even though",
    "但是|不过|然而|虽然|尽管|除了|即使|但",
    "하지만|그러나|그런데|지만|에도 불구하고|제외하고|경우에만",
    "しかし|けど|けれど|ただし|にもかかわらず|以外|場合のみ",
    "pero|sin embargo|aunque|a pesar de|excepto|salvo|mientras que|solo si|sólo si|incluso si|aun así|no obstante",
    "aber|jedoch|allerdings|obwohl|trotz|außer|nur wenn|auch wenn|selbst wenn|dennoch|trotzdem",
    "mais|cependant|toutefois|pourtant|bien que|malgré|sauf|excepté|alors que|tandis que|seulement si|même si|néanmoins",
    "mas|porém|contudo|entretanto|no entanto|embora|apesar de|exceto|só se|somente se|mesmo se|mesmo que|todavia",
)
"""Words of a caveat: it works, but …"""
BEHAVIOUR_WORDS = _words(
    "returns|responds|accepts|rejects|requires|supports|expects|allows|blocks|ignores|"
    "handles|works|breaks|fails|throws|raises|stores|triggers|resets|expires|overrides|"
    "skips|drops|caches|retries|times out",
    "返回|支持|接受|拒绝|忽略|处理|触发|存储|失效|报错|覆盖|跳过|缓存|重试|超时",
    "반환|지원|허용|거부|무시|처리|트리거|저장|만료|에러|덮어|건너뛴|캐시|재시도|시간 초과",
    "返す|返却|サポート|許可|拒否|無視|処理|トリガー|保存|期限切れ|エラー|上書き|スキップ|キャッシュ|再試行|タイムアウト",
    "devuelve|responde|acepta|rechaza|requiere|admite|soporta|permite|bloquea|ignora|maneja|gestiona|funciona|falla|lanza|guarda|almacena|dispara|reinicia|caduca|expira|sobrescribe|omite|descarta|reintenta",
    "gibt zurück|liefert|antwortet|akzeptiert|lehnt ab|erfordert|unterstützt|erwartet|erlaubt|blockiert|ignoriert|verarbeitet|funktioniert|bricht ab|schlägt fehl|wirft|speichert|löst aus|setzt zurück|läuft ab|überschreibt|überspringt|verwirft",
    "renvoie|retourne|répond|accepte|rejette|refuse|nécessite|exige|supporte|prend en charge|permet|bloque|ignore|gère|traite|fonctionne|échoue|lève|stocke|enregistre|déclenche|réinitialise|expire|écrase|saute|réessaie",
    "retorna|devolve|responde|aceita|rejeita|recusa|requer|exige|suporta|permite|bloqueia|ignora|trata|processa|funciona|falha|lança|armazena|salva|dispara|reinicia|expira|sobrescreve|pula|descarta",
)
"""Verbs of how a tool or system behaves (present tense)."""
FIRST_PERSON_WORDS = _words(
    "i|i'm|i've|i'll|i'd|my|me|we|we've|we're|we'll|our|us",
    "我|我们",
    "저는|제가|나는|내가|우리",
    "私|僕|俺|我々",
    "yo|me|mi|mis|nosotros|nosotras|nos|nuestro|nuestra|nuestros|nuestras",
    "ich|mich|mir|mein|meine|meinen|meinem|meiner|wir|uns|unser|unsere|unseren|unserem",
    "je|j'ai|j'avais|moi|mon|ma|mes|nous|notre|nos",
    "eu|meu|minha|meus|minhas|nós|nosso|nossa|nossos|nossas",
)
"""The speaker themself: an account of one's own doings."""

ADDRESS_WORDS = _words(
    "you|your|you're|you've|you'll|let's|let us|please",
    "你|您|请|咱们",
    "당신|너는|네가|해 주세요|해주세요|해 줘|해줘|하세요|합시다|하자",
    "あなた|君|ください|してほしい|しましょう",
    "tú|tu|tus|usted|ustedes|vosotros|te|por favor",
    "du|dich|dir|dein|deine|deinen|euch|bitte|lass uns|lasst uns",
    "tu|toi|te|ton|ta|tes|vous|votre|vos|s'il te plaît|s'il vous plaît",
    "você|vocês|tu|te|teu|tua|por favor",
)
"""Words that address the listener — a request made to the one being spoken to."""
POINTER_WORDS = _words(
    "this|these|the same|here|now|right now|at this time|for now|this time|this session|today",
    "这个|这些|这里|现在|此时|这次|暂时",
    "이것|이거|그것|그거|여기|지금|이번|당분간",
    "これ|それ|ここ|今|今回|当面",
    "este|esta|estos|estas|esto|aquí|ahora|ahora mismo|por ahora|esta vez|hoy",
    "dies|diese|dieser|dieses|diesen|hier|jetzt|gerade jetzt|vorerst|diesmal|heute",
    "ce|cet|cette|ces|ceci|cela|ça|ici|maintenant|pour l'instant|cette fois|aujourd'hui",
    "este|esta|estes|estas|isto|isso|esse|essa|aqui|agora|por enquanto|desta vez|hoje",
)
"""Words that point at what is in front of the speaker now: a request bound to the session."""
EXPECTATION_WORDS = _words(
    "should|will|would|ought to|is expected to|are expected to|is likely to|are likely to",
    "应该会|将会|会让|会使|应能|有望",
    "것입니다|것이다|겁니다|될 것|할 것으로|예상",
    "はず|でしょう|だろう|見込み",
    "debería|deberían|hará|harán|se espera que|es probable que",
    "sollte|sollten|wird|werden|würde|würden|dürfte|dürften",
    "devrait|devraient|va|vont|permettra|permettront|est censé|sont censés",
    "deveria|deveriam|vai|vão|irá|irão|espera-se que",
)
"""Modals of an expected effect ("These changes should make it clearer"): a forecast, not a fact."""
AGREEMENT_WORDS = _words(
    "you're right|you are right|you're absolutely right|you are absolutely right|good point|good catch|"
    "fair point|great point|great question|good question",
    "你说得对|您说得对|说得对|你是对的|好问题|好建议",
    "맞습니다|맞아요|말씀이 맞|좋은 지적|좋은 질문|말씀하신 대로",
    "おっしゃる通り|その通りです|ご指摘の通り|良い質問|いい質問",
    "tienes razón|tiene razón|tienes toda la razón|buena observación|buena pregunta|buen punto|bien visto",
    "du hast recht|sie haben recht|da hast du recht|guter punkt|gute frage|guter hinweis",
    "tu as raison|vous avez raison|vous avez tout à fait raison|bonne remarque|bonne question|bien vu",
    "você tem razão|tem razão|você está certo|você está certa|bom ponto|boa pergunta|boa observação",
)
"""How an assistant opens a reply that agrees with the listener ("You're right - …"): what
follows answers this turn, restating the listener's point for the session."""
STANDING_WORDS = _words(
    "always|never|every time|each time|whenever|from now on|going forward|in future|in the future|"
    "by default|every session|in every",
    "总是|永远|每次|以后|今后|始终|默认",
    "항상|절대|매번|앞으로|언제나|기본적으로",
    "常に|いつも|毎回|今後|必ず",
    "siempre|nunca|cada vez|cada vez que|siempre que|de ahora en adelante|a partir de ahora|en adelante|en el futuro|por defecto|en cada sesión",
    "immer|nie|niemals|jedes mal|wann immer|ab jetzt|von nun an|künftig|zukünftig|in zukunft|standardmäßig|in jeder sitzung",
    "toujours|jamais|chaque fois|à chaque fois|à partir de maintenant|désormais|dorénavant|à l'avenir|par défaut|à chaque session",
    "sempre|nunca|toda vez|cada vez|sempre que|de agora em diante|a partir de agora|daqui em diante|no futuro|por padrão|em toda sessão",
)
"""Words that make a request standing ("always", "from now on", 今后, 앞으로, 今後)."""
HEDGE_WORDS = _words(
    "i suspect|i guess|i wonder|i believe|i assume|i imagine|maybe|perhaps|probably|possibly|"
    "presumably|might have|may have|could have|must have|i think|i thought|i feel like|"
    "i'm not sure|i am not sure|apparently",
    "我怀疑|我猜|我估计|也许|可能是|大概|或许|估计是|我觉得|我认为|我想|好像|似乎|不确定",
    "아마|것 같|듯하|듯합니다|추측|의심이|생각합니다|생각한다|생각해요|잘 모르겠",
    "かもしれない|かもしれません|たぶん|多分|おそらく|恐らく|気がする|のだろう|ようだ|と思う|と思います|と思った|らしい",
    "creo que|pienso que|me parece que|supongo que|sospecho que|quizás|quizá|tal vez|a lo mejor|probablemente|posiblemente|no estoy seguro|no estoy segura|parece que",
    "ich glaube|ich denke|ich vermute|ich nehme an|vermutlich|vielleicht|wahrscheinlich|möglicherweise|eventuell|anscheinend|ich bin nicht sicher",
    "je pense que|je crois que|je suppose que|je soupçonne que|il me semble que|peut-être|probablement|sans doute|possiblement|je ne suis pas sûr|je ne suis pas sûre|apparemment|il semble que",
    "acho que|penso que|creio que|suponho que|suspeito que|talvez|provavelmente|possivelmente|não tenho certeza|parece que|aparentemente",
)
"""Words that hedge a claim ("I suspect", "maybe", 也许, 아마, かもしれない): with the past, a
guess at what happened, not what is known."""
REQUEST_WORDS = _words(
    "update|add|fix|change|remove|delete|review|describe|rename|move|commit|write|rewrite|"
    "create|include|mention|replace|drop|put|edit|document|acknowledge|note|list|reference|"
    "use|make|set|check|run|keep|wait|retry|ask|call|read|test|install|deploy|restart|verify|"
    "follow|skip|store|save|send|pin|treat|start|stop|enable|disable|rotate|consider",
    "请|帮我|麻烦你|给我",
    "해 주세요|해주세요|해 줘|해줘|하세요|바꿔|고쳐",
    "してください|して下さい|してほしい|お願い",
    "actualiza|considera|considerar|añade|agrega|corrige|cambia|elimina|borra|revisa|describe|renombra|mueve|escribe|crea|incluye|menciona|reemplaza|pon|edita|documenta|usa|haz|comprueba|ejecuta|por favor|revisar|comprobar|verificar|añadir|agregar|corregir|eliminar|borrar|actualizar|ejecutar|probar|reiniciar|usar|utilizar|crear|escribir|documentar|reemplazar|instalar|configurar|guardar|enviar|pedir",
    "aktualisiere|erwäge|überlege|erwägen|füge|ergänze|korrigiere|behebe|ändere|entferne|lösche|prüfe|überprüfe|beschreibe|benenne|verschiebe|schreibe|erstelle|ersetze|bearbeite|dokumentiere|verwende|benutze|mach|führe|bitte|prüfen|überprüfen|aktualisieren|hinzufügen|löschen|entfernen|neu starten|verwenden|benutzen|erstellen|installieren|konfigurieren|sichern",
    "mets à jour|envisage|envisagez|envisager|mettez à jour|ajoute|ajoutez|corrige|corrigez|modifie|modifiez|supprime|supprimez|vérifie|vérifiez|décris|décrivez|renomme|renommez|déplace|déplacez|écris|écrivez|crée|créez|mentionne|remplace|remplacez|édite|documente|utilise|utilisez|fais|faites|lance|lancez|merci de|vérifier|contrôler|ajouter|corriger|supprimer|modifier|mettre à jour|lancer|exécuter|tester|relancer|redémarrer|utiliser|créer|écrire|documenter|remplacer|installer|configurer|sauvegarder|envoyer|demander|penser à",
    "atualize|considere|considerar|adicione|corrija|mude|altere|remova|apague|revise|descreva|renomeie|mova|escreva|crie|inclua|mencione|substitua|edite|documente|faça|verifique|execute|rode|por favor|verificar|conferir|adicionar|corrigir|remover|apagar|atualizar|executar|rodar|testar|reiniciar|usar|utilizar|criar|escrever|documentar|substituir|instalar|configurar|salvar|enviar|pedir",
)
"""How a clause asks the listener to do something (a verb in the imperative, or the
infinitive a note gives an instruction with — "vérifier d'abord …", "revisar primero …" —
opening the clause; 请, 해 주세요, してください anywhere in it)."""
TIME_UNIT_WORDS = _words(
    "s|sec|secs|second|seconds|ms|min|mins|minute|minutes|h|hr|hrs|hour|hours|d|day|days|"
    "week|weeks|month|months|year|years",
    "秒|秒钟|分钟|小时|个小时|天|周|星期|个星期|个月|年",
    "초|분|시간|일|주|주일|개월|달|년",
    "秒|分|分間|時間|日|日間|週|週間|か月|ヶ月|カ月|年",
    "segundo|segundos|minuto|minutos|hora|horas|día|días|semana|semanas|mes|meses|año|años",
    "sekunde|sekunden|minute|minuten|stunde|stunden|tag|tage|tagen|woche|wochen|monat|monate|monaten|jahr|jahre|jahren",
    "seconde|secondes|minute|minutes|heure|heures|jour|jours|semaine|semaines|mois|an|ans|année|années",
    "segundo|segundos|minuto|minutos|hora|horas|dia|dias|semana|semanas|mês|meses|ano|anos",
)
"""Units of time, after a number ("24 hours", "24小时", "24시간", "24時間", "24 Stunden")."""
SPAN_BEFORE_WORDS = _words(
    "after|within|every|per|up to|at most|at least|no more than|for up to|in under|once every",
    "每|每隔|最多|至少|不超过",
    "",
    "",
    "después de|tras|dentro de|en menos de|cada|por|como máximo|como mínimo|al menos|hasta",
    "nach|innerhalb|innerhalb von|binnen|alle|pro|höchstens|mindestens|bis zu",
    "après|au bout de|en moins de|toutes les|tous les|par|au plus|au moins|au maximum|jusqu'à",
    "após|depois de|dentro de|em até|a cada|por|no máximo|pelo menos|no mínimo|até",
)
"""Words before a duration that state it as a span a rule sets ("expires after 24 hours",
"within 5 min", "every 4 h", "nach 24 Stunden", "每24小时"): a limit, not a moment."""
SPAN_AFTER_WORDS = _words(
    "after|before",
    "后|之后|以后|内|之内|以内",
    "후|후에|뒤|뒤에|이내|이내에|안에|내에|마다|만에",
    "後|後に|以内|以内に|内に|ごと|ごとに|おき|おきに|で",
    "",
    "",
    "",
    "",
)
"""Words after a duration that state it as a span ("30 days after creation", "24小时后",
"24시간 후에", "24時間後に", "5分以内")."""
COUNTDOWN_WORDS = _words(
    "remaining|left|ago|to go",
    "剩余|还剩|剩下|前",
    "남음|남았|남은|전",
    "残り|あと|前",
    "restante|restantes|quedan|queda|hace",
    "verbleibend|übrig|noch|vor",
    "restant|restants|restante|restantes|il reste|il y a|encore",
    "restante|restantes|faltam|falta|há",
)
"""Words that count time left or since ("23h remaining", "2 days ago", "剩余23小时", "23시간
남음", "vor 2 Stunden"): a duration with one of them, next to it, is a moment."""
RELEASE_WORDS = _words(
    "deploy|deploys|deployed|release|releases|released|publish|publishes|published|ship|ships|"
    "shipped|roll out|rolled out|bump|bumps|bumped|upgrade|upgrades|upgraded|downgrade|"
    "downgraded|install|installs|installed|tag|tagged|rollback|roll back|rolled back",
    "发布|部署|上线|升级|降级|安装|回滚",
    "배포|릴리스|출시|업그레이드|다운그레이드|설치|롤백",
    "デプロイ|リリース|公開|アップグレード|ダウングレード|インストール|ロールバック",
    "despliega|desplegar|desplegué|desplegado|publica|publicar|publiqué|lanza|lanzar|lancé|instala|instalar|instalé",
    "deploye|deployen|deployt|veröffentliche|veröffentlichen|veröffentlicht|ausrollen|ausgerollt|installiere|installieren|installiert",
    "déploie|déployer|déployé|publie|publier|publié|livre|livrer|livré|installe|installer|installé",
    "implanta|implantar|implantei|publica|publicar|publiquei|lança|lançar|lancei|instala|instalar|instalei",
)
"""Verbs of an event that moves a version ("deploy api@4.12.0 staging", "发布 v2.8.1 到
prod", "v2.8.1을 배포", "本番にデプロイ"): the version an entry opens (or, in Korean and
Japanese, ends) with one of them names what the event moved — a record, not a stable fact."""
IMPERATIVE_OPENING_WORDS = _words(
    "",
    "请|使用|改用|先|记住|保持|等待|重试|启用|禁用|跳过|重启|切换到",
)
"""Chinese verbs that open a sentence with no subject: an instruction to the reader
("使用蓝绿部署发布 API。", "先备份再升级。"). Only verbs that rarely open a noun: 测试, 配置,
部署, 更新 … also name things ("测试账号", "配置文件"), and Chinese writes no mark between
a verb and its object to tell them apart. The imperative of a spaced script is a request
verb opening the sentence (`REQUEST_WORDS`); of Korean and Japanese, its ending
(`IMPERATIVE_ENDING_WORDS`)."""
IMPERATIVE_ENDING_WORDS = _words(
    "",
    "",
    "하라|해라|으라|어라|아라|거라|세요|십시오|하시오|마라|말라|하자|합시다|주세요|해 줘|해줘",
    "てください|て下さい|でください|なさい|しろ|せよ|ように|べし",
)
"""Korean and Japanese endings that tell the reader to do something ("사용하라", "사용하세요",
"使ってください", "使いなさい")."""
UNTIL_WORDS = _words(
    "until|till|wait until|wait till|not before|back at|resets at|expires at|retry at|retry after",
    "直到|等到|之前|为止|以前",
    "까지|이후에|후에",
    "まで|以降|以後",
    "hasta|hasta las|hasta el|esperar hasta|no antes de",
    "bis|bis um|warten bis|nicht vor",
    "jusqu'à|jusqu'au|attendre jusqu'à|pas avant",
    "até|até as|até às|esperar até|não antes de",
)
"""Words that bound a statement by a moment ("wait until 23:45", "23:45까지", "23時まで")."""

# A word, and a compound joined by "-", "." or "/" as one token ("claude-dev-log", "notes.md"):
# a cue word inside a name is not that word.
_TOKEN = re.compile(r"[^\W_]+(?:['./-][^\W_]+)*")


@functools.lru_cache(maxsize=4096)
def _tokens(text: str) -> tuple[str, ...]:
    # Cached: one entry's text is read by a dozen lexicons in a row (`salience`), and
    # headings repeat across thousands of entries.
    return tuple(_TOKEN.findall(unicodedata.normalize("NFKC", text).casefold().replace("’", "'")))


_DENSE_SCRIPT = re.compile(
    "[\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff\uff65-\uff9f。]"
)
"""Hangul, kana and CJK ideographs: scripts whose cue words match as substrings."""


def spaced(word: str) -> bool:
    """True when `word` is written in a script that separates words with spaces (Latin,
    accented or not: "must", "corrección", "müssen"): it matches as a whole word. Before,
    only ASCII words did, so an accented word matched inside others ("más" in "demás")."""
    return _DENSE_SCRIPT.search(word) is None


class Lexicon:
    """A list of cue words: those of spaced scripts (`spaced`) matched as whole words or
    phrases, case-insensitively (by tokens: linear in the text, however many words the list
    holds); others (Chinese, Korean, Japanese) as substrings of the NFKC-normalised text."""

    def __init__(self, words: Iterable[str]) -> None:
        self.words = tuple(dict.fromkeys(w.strip() for w in words if w.strip()))
        self._phrases: set[tuple[str, ...]] = set()
        sizes: dict[str, set[int]] = {}  # a phrase's first token → the lengths of its phrases
        dense: list[str] = []
        for word in self.words:
            if spaced(word):
                phrase = _tokens(word)
                if phrase:
                    self._phrases.add(phrase)
                    sizes.setdefault(phrase[0], set()).add(len(phrase))
            else:
                dense.append(unicodedata.normalize("NFKC", word))
        self._sizes = {first: tuple(sorted(n)) for first, n in sizes.items()}
        self._dense = tuple(dense)
        # Whether a text holds any of them: one scan of the text, not one per word.
        self._dense_any = re.compile("|".join(map(re.escape, self._dense))) if self._dense else None
        # A text of ASCII alone cannot hold a word that is not ASCII: skip the substring scan.
        self._dense_ascii = any(w.isascii() for w in self._dense)
        self._dense_tails = tuple(t for t in (w.rstrip("。") for w in self._dense) if t)

    def _hits(self, tokens: tuple[str, ...], first_only: bool = False, stop: bool = False) -> int:
        """How many token positions open a phrase of the list (one count per position);
        `first_only`: position 0 alone; `stop`: at the first hit."""
        found = 0
        sizes_of = self._sizes
        if not first_only and sizes_of.keys().isdisjoint(tokens):
            return 0  # no token opens a phrase of the list (one scan in C)
        count = len(tokens)
        for i in range(min(1, count) if first_only else count):
            sizes = sizes_of.get(tokens[i])
            if sizes is None:
                continue
            for size in sizes:
                if size <= count - i and (size == 1 or tokens[i : i + size] in self._phrases):
                    found += 1
                    break
            if found and stop:
                return found
        return found

    def _no_dense(self, text: str) -> bool:
        return not self._dense or (not self._dense_ascii and text.isascii())

    def count(self, text: str) -> int:
        """How many cue occurrences `text` holds."""
        total = self._hits(_tokens(text)) if self._phrases else 0
        if self._no_dense(text):
            return total
        return total + sum(text.count(w) for w in self._dense)

    def search(self, text: str) -> bool:
        """True when `text` holds at least one of the words."""
        if self._phrases and self._hits(_tokens(text), stop=True):
            return True
        if self._no_dense(text) or self._dense_any is None:
            return False
        return self._dense_any.search(text) is not None

    def ends(self, text: str) -> bool:
        """True when `text`, a sentence of a language that puts its verb last (Korean,
        Japanese), ends with one of the non-Latin words."""
        tail = text.rstrip(" \t.。!！?？)）\"'”’")
        return tail.endswith(self._dense_tails)

    def starts(self, text: str) -> bool:
        """True when `text` opens with one of the words (after spaces and punctuation)."""
        head = text.lstrip(" \t*_`>\"'“‘「『(-–—:：,.、")[:40]
        if self._phrases and head[:1].isalnum():
            tokens = _tokens(head)
            if tokens and self._hits(tokens, first_only=True):
                return True
        return head.startswith(self._dense)


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
    moment: Lexicon = field(default_factory=lambda: Lexicon(MOMENT_WORDS))
    future: Lexicon = field(default_factory=lambda: Lexicon(FUTURE_WORDS))
    generic: Lexicon = field(default_factory=lambda: Lexicon(GENERIC_WORDS))
    contrast: Lexicon = field(default_factory=lambda: Lexicon(CONTRAST_WORDS))
    behaviour: Lexicon = field(default_factory=lambda: Lexicon(BEHAVIOUR_WORDS))
    first_person: Lexicon = field(default_factory=lambda: Lexicon(FIRST_PERSON_WORDS))
    address: Lexicon = field(default_factory=lambda: Lexicon(ADDRESS_WORDS))
    pointer: Lexicon = field(default_factory=lambda: Lexicon(POINTER_WORDS))
    expectation: Lexicon = field(default_factory=lambda: Lexicon(EXPECTATION_WORDS))
    standing: Lexicon = field(default_factory=lambda: Lexicon(STANDING_WORDS))
    agreement: Lexicon = field(default_factory=lambda: Lexicon(AGREEMENT_WORDS))
    hedge: Lexicon = field(default_factory=lambda: Lexicon(HEDGE_WORDS))
    request: Lexicon = field(default_factory=lambda: Lexicon(REQUEST_WORDS))
    release: Lexicon = field(default_factory=lambda: Lexicon(RELEASE_WORDS))
    imperative_opening: Lexicon = field(default_factory=lambda: Lexicon(IMPERATIVE_OPENING_WORDS))
    imperative_ending: Lexicon = field(default_factory=lambda: Lexicon(IMPERATIVE_ENDING_WORDS))

    @classmethod
    def configured(cls, keep: Iterable[str] = (), skip: Iterable[str] = ()) -> Cues:
        return cls(keep=Lexicon(keep), skip=Lexicon(skip))
