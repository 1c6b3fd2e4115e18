"""Recall in a long conversation: the turns of one group that answer a question.

A turn rarely answers a question alone. "A beagle puppy!" answers "what pet did Jon
get?" only beside the turn before it ("so what did you two bring home?"), and a turn
about a move belongs to the session that talked about moving. So the group's turns are
read whole (the latest :data:`MAX_TURNS`, with their vectors, from the index) and each
is scored, for the question, on:

- ``meaning``: cosine of question and turn;
- ``context``: cosine of question and the turn read with the one before it in its
  session (the mean of the two vectors);
- ``session``: cosine of question and the centre of the turn's session (turns less than
  :data:`SESSION_GAP` apart);
- ``words``: BM25 (``bm25s``) of the question over the turn and the
  :data:`KEYWORD_WINDOW` turns before it in its session ("She brought stroopwafels to the
  interview" is about the Lotte named two turns before);
- ``time``: the question names a time ("in May", "last summer") and the turn was said
  then or names that time itself;
- ``dated``: the question asks when ("when did…", "on what date…", "in which month…")
  and the turn names a time, the more specific the better (:data:`SPECIFIC`).

A question that names one speaker ("How did Nadia meet Keir?") is also read in that
speaker's own words ("How did I meet Keir?", :func:`in_own_words`): people tell their own
news in the first person, so the speaker's turns keep the better of the two relevances.

Each feature is scaled to [0, 1] over the group's turns for this question, and the
weighted sum divided by the weights is the evidence. Four priors are added to it
(:data:`PRIORS`):

- ``length``: how much the turn says (log of its length): "Haha, same!" answers nothing;
- ``speaker``: the question names the turn's speaker ("Who is Julia's boss?" is most
  likely answered by Julia);
- ``neighbour``: the meaning of the turn before or after it in its session, whichever is
  closer to the question (the answer often sits beside the turn that names the topic);
- ``tells``: the turn ends as a statement, not a question ("Did Bex start yet?" shares the
  question's words and answers nothing).

The weights below were chosen on the train split of the labelled long-history set
(``tests/eval/longmem``) and are measured on its test split by ``make eval``: windows
and sessions lift evidence recall@10 from 0.48 (vector alone) to about 0.69 there, and
the priors lift train from 0.708 to 0.779 (the same priors chosen in each of the four
leave-one-conversation-out folds; 0.779 held out that way). Rocchio feedback,
one-turn-per-session diversity and weights fitted by pairwise logistic regression over
sixteen features (0.745) were tried and did less.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

import numpy as np

from api.services.context import ServiceContext
from projections.index.port import Filters, Hit, IndexedObject, Kind
from streams.memory.english import english_entities_of
from streams.memory.when import Mention, chat_words, when

log = logging.getLogger(__name__)

MAX_TURNS = 5_000
"""Turns of one group read whole at most (the latest); older ones are found by the
index's own search only."""
SESSION_GAP = timedelta(hours=3)
"""A pause longer than this between two turns starts a new session."""
WEIGHTS = {
    "meaning": 1.0, "context": 0.5, "session": 0.25, "words": 0.5, "time": 0.75, "dated": 0.5,
    "answer": 0.5,
}  # fmt: skip
"""Feature weights, chosen on the train split of ``tests/eval/longmem``. ``time`` (a time
the question names; :data:`PARTS` divides it among the question's parts) was 1.5, to
outweigh the words of any one other feature; on the 34 train conversations 1.5 / 1.0 /
0.75 / 0.5 gave recall@10 0.803 / 0.806 / 0.807 / 0.807 (multi-hop 0.691 -> 0.698), and on
three conversations written afterwards and never fitted on 0.854 / 0.856 / 0.858 / 0.858
(multi-hop 0.698 -> 0.719), asked dates unchanged: the time had crowded out the words.
``dated`` counts a day above a year (:data:`SPECIFIC`) for a question asking *when*;
``answer`` is that times the turn's or its session neighbour's closeness to the question
(:func:`_near`): the day is often said in a short reply beside the turn that names the
event ("When was she born?" / "A week ago today."). On the 16 train conversations, dated
/ answer 0.75 / 0 (before) -> 0.5 / 0.5 gave asked dates in the top 10 0.897 -> 0.907,
recall@10 0.813 either way; on three conversations written afterwards and never fitted
on, asked dates 0.815 -> 0.852 and recall@10 0.756 -> 0.761. ``words`` stays 0.5 over
words as written: stemmed (Snowball), 0.625 / 0.875 gave 0.815 / 0.816 on 43 train
conversations against 0.809, but on six never fitted on, 0.843 and 0.818 at 0.5 unstemmed
against 0.843 and 0.817 stemmed at 0.625 (multi-hop 0.786 -> 0.745 on the second three;
asked dates one fewer there); the gain was in-sample only."""
PRIORS = {"length": 0.3, "speaker": 0.1, "neighbour": 0.2, "tells": 0.05}
"""What is added to the weighted evidence (each in [0, 1]; the sum is divided by
``1 + sum(PRIORS)`` so that relevance stays in [0, 1]); chosen on the same train split.
``tells`` is whether the turn ends as a statement, not a question: "Did Bex start yet?"
shares the question's words and answers nothing (on 43 train conversations 0 / 0.05 / 0.1
/ 0.2 gave recall@10 0.809 / 0.813 / 0.813 / 0.810, 22 up and 8 down at 0.05, asked dates
unchanged; on three written afterwards and never fitted on, 0.823 / 0.829 / 0.831 /
0.836)."""
KEYWORD_WINDOW = 2
"""Turns before a turn, in its session, read with it by the keyword side. Chosen on the
train split: 1 / 2 / 3 / 4 turns gave evidence recall@10 0.767 / 0.781 / 0.774 / 0.773
(2 beat 1 on six of its seven conversations)."""
ASKS_WHEN = re.compile(
    r"^\s*(?:(?:around|roughly|about|approximately|since)\s+)?when\b"
    r"|^\s*(?:(?:on|in|at|from|since|until|till|by|during|around)\s+)?(?:what|which)\s+"
    r"(?:date|day|month|year|week)\b"
    r"|^\s*what\s+(?:was|is)\s+the\s+date\b|^\s*how\s+(?:long|many\s+\w+)\s+ago\b",
    re.I,
)
"""A question that asks for a time."""
PARTS = re.compile(
    r"(?:,|\band)\s+(?:what|who|whom|whose|where|when|why|which|how)\b"
    r"|\bbetween\b.*\band\b|\bfrom\b.*\b(?:to|through|until)\b",
    re.I,
)
"""Where a question asks a second thing ("what job did she start with, and what role did
she take on in September?", "how did the rate change between the first quote and
December?"). A time such a question names dates one of its parts, so it weighs
``time`` divided by the number of parts: at full weight the month's turns crowded out the
other part (on the 16 train conversations recall@10 0.806 -> 0.813, multi-hop 0.661 ->
0.691, single-hop and the asked dates unchanged)."""
SPECIFIC = {"day": 1.0, "week": 0.9, "month": 0.6, "season": 0.4, "year": 0.2}
"""How well a time a turn names answers a question asking *when*, by its granularity:
"yesterday" answers "on what day", "in 2022" barely. Set by specificity, not fitted;
on the train split evidence recall@10 went 0.786 -> 0.789 against any named time
counting alike (two of seven conversations up, none down)."""
CACHED_GROUPS = 64
"""Groups whose prepared turns (matrix, sessions, keyword index) are kept."""


@dataclass(frozen=True)
class Conversation:
    """A group's turns prepared for ranking, oldest first."""

    turns: tuple[IndexedObject, ...]
    vectors: Any  # (n, d) unit rows; zero rows for turns without a vector
    context: Any  # (n, d) unit rows: each turn with the one before it in its session
    sessions: Any  # (n, d) unit rows: the centre of each turn's session
    keywords: Any  # bm25s.BM25 over each turn with the turns before it (KEYWORD_WINDOW)
    said: tuple[datetime | None, ...]
    times: tuple[tuple[Mention, ...], ...]
    before: Any  # (n,) bool: the turn before is in the same session
    lengths: Any  # (n,) log of each turn's length in characters
    tells: Any  # (n,) float: 1 where the turn does not end with a question mark
    speakers: tuple[str, ...]  # each turn's speaker's first name ("" when unnamed)


def _unit(rows: Any) -> Any:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return np.divide(rows, norms, out=np.zeros_like(rows), where=norms > 0)


def _scaled(values: Any) -> Any:
    low, high = float(values.min()), float(values.max())
    return (values - low) / (high - low) if high > low else np.zeros_like(values)


def terms(text: str) -> list[str]:
    """The keywords of ``text`` as the keyword side reads them (no stop words)."""
    return [t for t in _tokens([text]).vocab if t]


def _tokens(texts: Sequence[str]) -> Any:
    import bm25s

    return bm25s.tokenize(list(texts), stopwords="en", show_progress=False)


def prepare(turns: Sequence[IndexedObject]) -> Conversation:
    """``turns`` (any order) ready to rank: ordered by when they were said, windows,
    sessions and the keyword index built once."""
    import bm25s

    ordered = sorted(turns, key=lambda o: o.updated_at or datetime.min.replace(tzinfo=UTC))
    dims = next((len(o.vector) for o in ordered if o.vector), 1)
    vectors = np.array(
        [o.vector if o.vector and len(o.vector) == dims else [0.0] * dims for o in ordered],
        dtype=np.float32,
    ).reshape(len(ordered), dims)
    vectors = _unit(vectors)
    same = np.zeros(len(ordered), dtype=bool)
    session = np.zeros(len(ordered), dtype=np.int64)
    for i in range(1, len(ordered)):
        before, now = ordered[i - 1].updated_at, ordered[i].updated_at
        same[i] = before is not None and now is not None and now - before <= SESSION_GAP
        session[i] = session[i - 1] + (0 if same[i] else 1)
    context = vectors.copy()
    context[1:][same[1:]] += vectors[:-1][same[1:]]
    centres = np.zeros((int(session[-1]) + 1 if len(ordered) else 0, dims), dtype=np.float32)
    np.add.at(centres, session, vectors)
    texts = [
        "\n".join(o.text for o in ordered[i - _window(same, i) : i + 1])
        for i in range(len(ordered))
    ]
    keywords = bm25s.BM25()
    if texts:
        keywords.index(_tokens(texts), show_progress=False)
    return Conversation(
        turns=tuple(ordered), vectors=vectors, context=_unit(context),
        sessions=_unit(centres)[session] if len(ordered) else centres, keywords=keywords,
        said=tuple(o.updated_at for o in ordered),
        times=tuple(mentioned(o.metadata.get("times", "")) for o in ordered), before=same,
        lengths=np.log1p(np.array([len(o.text) for o in ordered], dtype=np.float64)),
        tells=np.array([not o.text.rstrip().endswith("?") for o in ordered], dtype=np.float64),
        speakers=tuple(_first_name(o.metadata.get("speaker", "")) for o in ordered),
    )  # fmt: skip


def _window(same: Any, i: int) -> int:
    """How many of the :data:`KEYWORD_WINDOW` turns before turn ``i`` share its session."""
    back = 0
    while back < KEYWORD_WINDOW and i - back > 0 and same[i - back]:
        back += 1
    return back


def _first_name(speaker: str) -> str:
    words = speaker.split()
    return words[0] if words else ""


def mentioned(labels: str) -> tuple[Mention, ...]:
    """The :class:`Mention` s an episode's ``times`` metadata holds (their labels)."""
    from streams.memory.when import span_of

    out = []
    for label in labels.split():
        try:
            first, last = span_of(label.split("..")[0])[0], span_of(label.split("..")[-1])[1]
        except ValueError:
            continue
        if ".." in label:
            granularity = "week" if (last - first).days < 7 else "season"
        else:
            granularity = {10: "day", 7: "month"}.get(len(label), "year")
        out.append(Mention(label, first, last, granularity))  # type: ignore[arg-type]
    return tuple(out)


class Asked(NamedTuple):
    """What a question says of itself, read once however it is reworded."""

    question: str
    times: Sequence[Mention]  # the times it names
    when: bool  # whether it asks for a time


def in_own_words(question: str, speakers: Sequence[str]) -> list[tuple[str, str]]:
    """Each speaker (first name) ``question`` names, one or two, with the question as that
    speaker would ask it: themself as I, me or my (and "her"/"his" before a noun as my
    when no one else is named), the other one named as you ("How did Nadia meet Keir?" ->
    "How did I meet Keir?"; "What did Kwame bring Ellie?" -> "What did I
    bring you?" for Kwame, "What did you bring me?" for Ellie). Empty when it names none,
    or more than two."""
    named = sorted({s for s in set(speakers) if s and re.search(rf"\b{re.escape(s)}\b", question)})
    if len(named) not in (1, 2):
        return []
    others: list[str | None] = [None] if len(named) == 1 else [named[1], named[0]]
    return [(me, _reworded(question, me, you)) for me, you in zip(named, others, strict=True)]


_POSSESSIVE = re.compile(
    r"\b(?:her|his)\b(?=\s+(?!(?:the|a|an|that|this|these|those|some|it|about|to|for|with|on|in"
    r"|at|back|up|out|off|down|over|and|or|if|when|what|how|after|before|again|now|then|yet)\b)"
    r"[a-z])"
)
""""her"/"his" before a noun: whose, not whom ("her wrist", not "replaced her after")."""


def _reworded(question: str, me: str, you: str | None) -> str:
    own = re.sub(rf"\b{re.escape(me)}['\u2019]s\b", "my", question)
    others = [w for w in re.findall(r"\b[A-Z][\w'\u2019]*", question)[1:] if not w.startswith(me)]
    if you is None and not others:
        # the only person named: "When did Maya hurt her wrist?" is "... hurt my wrist?"
        own = _POSSESSIVE.sub("my", own)
        own = re.sub(r"\b(?:herself|himself)\b", "myself", own)
    own = re.sub(
        rf"\b{re.escape(me)}\b", lambda m: "I" if _subject_at(m.string, m.start()) else "me", own
    )
    if you is not None:
        own = re.sub(rf"\b{re.escape(you)}['\u2019]s\b", "your", own)
        own = re.sub(rf"\b{re.escape(you)}\b", "you", own)
    return _AGREEING.sub(lambda m: _AGREEMENT[m.group(0)], own)


def _subject_at(text: str, start: int) -> bool:
    """Whether a name at ``start`` is a clause's subject ("did Nadia", "and Nadia", at the
    start), not an object ("helped Nadia", "to Nadia")."""
    before = text[:start].rstrip()
    word = re.search(r"(\w+)$", before)
    return not before or before[-1] in ",;:?!.(" or bool(word and word[1].lower() in _LEADS)


_LEADS = frozenset(
    {"did", "does", "do", "was", "were", "is", "am", "are", "has", "have", "had", "will",
     "would", "can", "could", "should", "and", "or", "but", "when", "where", "why", "how",
     "what", "who", "whom", "that", "which", "as", "if", "while", "before", "after", "since",
     "until", "because", "so", "then", "once"}
)  # fmt: skip
"""Words after which a name is the subject of what follows."""
_AGREEMENT = {
    "does I": "do I", "Does I": "Do I", "I is": "I am", "is I": "am I", "Is I": "Am I",
    "I has": "I have", "has I": "have I", "Has I": "Have I", "I does": "I do",
    "I doesn't": "I don't", "I isn't": "I'm not", "does you": "do you", "Does you": "Do you",
    "you is": "you are", "is you": "are you", "Is you": "Are you", "you has": "you have",
    "has you": "have you", "Has you": "Have you", "you does": "you do", "you was": "you were",
    "was you": "were you", "Was you": "Were you", "you doesn't": "you don't",
}  # fmt: skip
_AGREEING = re.compile(r"\b(?:" + "|".join(map(re.escape, _AGREEMENT)) + r")\b")


def asked_times(question: str, now: datetime) -> list[Mention]:
    """The times ``question`` names, read against ``now`` (the conversation's present)."""
    return when().mentions(chat_words(question), now, english_entities_of)


def rank(
    conversation: Conversation, question: str, vector: Sequence[float] | None, now: datetime,
    own: Sequence[tuple[str, str, Sequence[float] | None]] = (),
    times: Sequence[Mention] | None = None,
) -> list[tuple[float, IndexedObject]]:  # fmt: skip
    """Every turn with its relevance to ``question`` in [0, 1], best first. ``own`` holds
    each speaker the question names, the question in their words (:func:`in_own_words`)
    and its vector: their turns are read against it too, and keep the better relevance.
    ``times``: the times the question names, when already read against ``now``."""
    if not conversation.turns:
        return []
    # The times a question names and whether it asks when are read once, from the question
    # as asked (spaCy's entity pipes read it, as they read the turns): its rewordings name
    # the same times.
    asked = Asked(
        question,
        asked_times(question, now) if times is None else times,
        bool(ASKS_WHEN.search(question)),
    )
    relevance = _everyone(conversation, question, vector, asked, own, {})
    order = np.argsort(-relevance, kind="stable")
    return [(float(relevance[i]), conversation.turns[i]) for i in order]


def _everyone(
    conversation: Conversation, question: str, vector: Sequence[float] | None, asked: Asked,
    own: Sequence[tuple[str, str, Sequence[float] | None]], memo: dict[str, Any],
) -> Any:  # fmt: skip
    """Each turn's relevance to ``question``, and a named speaker's turns also to the
    question in their own words, whichever is higher."""
    relevance = _relevance(conversation, question, vector, asked, memo)
    for name, words, own_vector in own:
        theirs = np.array([speaker == name for speaker in conversation.speakers])
        relevance = np.where(
            theirs,
            np.maximum(relevance, _relevance(conversation, words, own_vector, asked, memo)),
            relevance,
        )
    return relevance


def _relevance(
    conversation: Conversation,
    question: str,
    vector: Sequence[float] | None,
    asked: Asked,
    memo: dict[str, Any] | None = None,
) -> Any:
    """Each turn's relevance to ``question`` (the question as ``asked``, or a rewording of
    it: the speaker prior and the times stay the asked one's) in [0, 1], in the
    conversation's order. ``memo`` keeps what does not depend on the vector (keyword
    scores by wording, the times) across the calls of one ranking."""
    memo = {} if memo is None else memo
    n = len(conversation.turns)
    features: dict[str, Any] = {}
    if vector is not None and len(vector) == conversation.vectors.shape[1]:
        q = np.asarray(vector, dtype=np.float32)
        q = q / (np.linalg.norm(q) or 1.0)
        features["meaning"] = conversation.vectors @ q
        features["context"] = conversation.context @ q
        features["session"] = conversation.sessions @ q
    if f"words:{question}" not in memo:
        words = terms(question)
        memo[f"words:{question}"] = (
            np.asarray(conversation.keywords.get_scores(words), dtype=np.float64) if words else None
        )
    if memo[f"words:{question}"] is not None:
        features["words"] = memo[f"words:{question}"]
    if asked.times:
        if "time" not in memo:
            memo["time"] = np.array(
                [
                    float(
                        _said_within(said, asked.times)
                        or any(_overlaps(m, asked.times) for m in times)
                    )
                    for said, times in zip(conversation.said, conversation.times, strict=True)
                ]
            )
        features["time"] = memo["time"]
    if asked.when:
        if "dated" not in memo:
            memo["dated"] = np.array(
                [
                    max((SPECIFIC[m.granularity] for m in times), default=0.0)
                    for times in conversation.times
                ]
            )
        features["dated"] = memo["dated"]
        if "meaning" in features and WEIGHTS.get("answer"):
            features["answer"] = memo["dated"] * _scaled(_near(conversation, features["meaning"]))
    total = np.zeros(n)
    weight = 0.0
    parts = 1 + len(PARTS.findall(asked.question))
    for name, values in features.items():
        w = WEIGHTS[name] / parts if name == "time" else WEIGHTS[name]
        total += w * _scaled(np.asarray(values, dtype=np.float64))
        weight += w
    evidence = total / weight if weight else total
    return (evidence + _priors(conversation, asked.question, features.get("meaning"))) / (
        1.0 + sum(PRIORS.values())
    )


def _priors(conversation: Conversation, question: str, meaning: Any) -> Any:
    """``PRIORS`` weighted: how much each turn says, whether the question names its
    speaker, how close its session neighbours come to the question, and whether it tells
    rather than asks."""
    named = {
        name: bool(re.search(rf"\b{re.escape(name)}\b", question))
        for name in set(conversation.speakers)
        if name
    }
    out = PRIORS["length"] * _scaled(conversation.lengths) + PRIORS["tells"] * conversation.tells
    out = out + PRIORS["speaker"] * np.array(
        [float(named.get(name, False)) for name in conversation.speakers]
    )
    if meaning is not None:
        before = np.zeros(len(meaning))
        after = np.zeros(len(meaning))
        same = np.asarray(conversation.before, dtype=bool)
        before[1:] = np.where(same[1:], meaning[:-1], 0.0)
        after[:-1] = np.where(same[1:], meaning[1:], 0.0)
        out = out + PRIORS["neighbour"] * _scaled(np.maximum(before, after))
    return out


def _near(conversation: Conversation, meaning: Any) -> Any:
    """Each turn's closeness to the question, or its session neighbour's when closer."""
    same = np.asarray(conversation.before, dtype=bool)
    out = np.asarray(meaning, dtype=np.float64).copy()
    out[1:] = np.where(same[1:], np.maximum(out[1:], meaning[:-1]), out[1:])
    out[:-1] = np.where(same[1:], np.maximum(out[:-1], meaning[1:]), out[:-1])
    return out


def _said_within(said: datetime | None, asked: Sequence[Mention]) -> bool:
    return said is not None and any(m.start <= said.date() <= m.end for m in asked)


def _overlaps(mention: Mention, asked: Sequence[Mention]) -> bool:
    return any(mention.start <= m.end and m.start <= mention.end for m in asked)


class _Prepared:
    """Prepared conversations by group, reused while the group holds as many turns (a
    turn's text never changes under its id; a new turn or a forget changes the count)."""

    def __init__(self, size: int = CACHED_GROUPS) -> None:
        self.size = size
        self._lock = threading.Lock()
        self._by_group: OrderedDict[str, tuple[int, Conversation]] = OrderedDict()

    def get(self, group: str, count: int) -> Conversation | None:
        with self._lock:
            found = self._by_group.get(group)
            if found is None or found[0] != count:
                return None
            self._by_group.move_to_end(group)
            return found[1]

    def latest(self, group: str) -> Conversation | None:
        with self._lock:
            found = self._by_group.get(group)
            return found[1] if found is not None else None

    def put(self, group: str, count: int, turns: Sequence[IndexedObject]) -> Conversation:
        conversation = prepare(turns)
        with self._lock:
            self._by_group[group] = (count, conversation)
            self._by_group.move_to_end(group)
            while len(self._by_group) > self.size:
                self._by_group.popitem(last=False)
        return conversation


def said_span(group: str) -> tuple[datetime, datetime] | None:
    """When the first and the last turn of ``group`` were said, as last read whole."""
    conversation = _prepared().latest(group)
    said = [t for t in conversation.said if t] if conversation is not None else []
    return (min(said), max(said)) if said else None


async def _nothing() -> None:
    return None


@functools.cache
def _prepared() -> _Prepared:
    return _Prepared()


async def recall(
    ctx: ServiceContext, group: str, question: str, limit: int, as_of: datetime | None = None
) -> list[Hit] | None:
    """The ``limit`` turns of ``group`` that best answer ``question`` (said before
    ``as_of`` when given), as hits scored by their relevance; None when the index cannot
    read the group whole (the caller then searches the index instead)."""
    if ctx.index is None:
        return None
    index, tenant, where = ctx.index, group.partition(":")[0], Filters(group_id=group)
    # The question in its speakers' own words is encoded beside it, with the speakers as
    # last read; a group read anew rewords it again (the vectors are cached by text).
    known = _prepared().latest(group)
    early = in_own_words(question, known.speakers) if known is not None else []
    # The question's times are read (spaCy) while it is encoded, against the present of the
    # group as last read; read again below only if a new turn moved that present.
    then = as_of or (next((t for t in reversed(known.said) if t), None) if known else None)
    try:
        count, vector, _, times = await asyncio.gather(
            index.count(Kind.EPISODE, tenant, where), ctx.vector(question),
            asyncio.gather(*(ctx.vector(words) for _, words in early)),
            asyncio.to_thread(asked_times, question, then) if then else _nothing(),
        )  # fmt: skip
        conversation = _prepared().get(group, count)
        if conversation is None:
            turns = await index.recent(Kind.EPISODE, tenant, where, MAX_TURNS)
            conversation = await asyncio.to_thread(_prepared().put, group, count, turns)
    except Exception as exc:
        log.warning("recall: the group could not be read whole: %s", exc)
        return None
    # "In May" asked of a conversation from 2023 is May 2023: times in a question are
    # read against the conversation's own present, its last turn.
    now = as_of or next((t for t in reversed(conversation.said) if t), None) or datetime.now(UTC)
    said_by = in_own_words(question, conversation.speakers)
    vectors = await asyncio.gather(*(ctx.vector(words) for _, words in said_by))
    own = [(name, words, v) for (name, words), v in zip(said_by, vectors, strict=True)]
    ranked = await asyncio.to_thread(
        rank, conversation, question, vector, now, own, times if now == then else None
    )
    if as_of is not None:
        ranked = [(s, o) for s, o in ranked if o.updated_at is None or o.updated_at <= as_of]
    return [Hit(o, round(score, 4)) for score, o in ranked[:limit]]
