"""Recall in a long conversation: turns ranked with their neighbours, sessions and times."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest

from api.services.recall import (
    ASKS_WHEN,
    PARTS,
    PRIORS,
    WEIGHTS,
    in_own_words,
    mentioned,
    prepare,
    rank,
    terms,
)
from projections.index.port import IndexedObject, Kind
from streams.embedder.model import SentenceTransformerEmbedder

MODEL = "sentence-transformers/all-MiniLM-L6-v2"
START = datetime(2023, 5, 2, 18, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def embedder() -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder(MODEL)


def conversation(
    embedder: SentenceTransformerEmbedder, sessions: Sequence[Sequence[str]], times: dict[int, str]
) -> list[IndexedObject]:
    """Turns of sessions a week apart, a minute apart within one; ``times`` by turn number."""
    said, texts = [], []
    for s, session in enumerate(sessions):
        for i, text in enumerate(session):
            said.append(START + timedelta(days=7 * s, minutes=i))
            texts.append(text)
    vectors = embedder.encode(texts)
    return [
        IndexedObject(
            chunk_id=f"t{n}", kind=Kind.EPISODE, document_id=f"t{n}", text=text, tenant="acme",
            group_id="acme:chat", updated_at=when, vector=tuple(vector),
            metadata={"times": times[n]} if n in times else {},
        )
        for n, (text, when, vector) in enumerate(zip(texts, said, vectors, strict=True))
    ]  # fmt: skip


SESSIONS = [
    ["Jon: Guess what we brought home on Saturday?", "Maya: No idea, tell me!",
     "Jon: A beagle puppy called Biscuit.", "Maya: Stop, I need photos."],
    ["Maya: Work is mad, the new manager started.", "Jon: Is she any good?",
     "Maya: Too early to say. She likes spreadsheets.", "Jon: Spreadsheets are fine."],
    ["Jon: We finally booked the trip.", "Maya: Where to?", "Jon: Lisbon in June.",
     "Maya: I'm so jealous."],
]  # fmt: skip


def ranked_ids(
    turns: list[IndexedObject], embedder: SentenceTransformerEmbedder, question: str
) -> list[tuple[float, str]]:
    vector = embedder.encode([question])[0]
    return [(score, o.chunk_id) for score, o in rank(prepare(turns), question, vector, START)]


def test_a_short_answer_is_found_through_the_turn_before_it(
    embedder: SentenceTransformerEmbedder,
) -> None:
    turns = conversation(embedder, SESSIONS, {})
    ranked = [i for _, i in ranked_ids(turns, embedder, "Which city is Jon travelling to?")]
    # "Lisbon in June." says nothing of travel alone; beside "Where to?" it answers. The
    # length prior keeps it behind the longer turn that names the trip.
    assert ranked.index("t10") < ranked.index("t9")
    assert "t10" in ranked[:3]


def test_a_turn_that_says_more_outranks_a_bare_reply_on_the_same_topic(
    embedder: SentenceTransformerEmbedder,
) -> None:
    sessions = [
        ["Ana: How was the weekend?", "Ben: Good! We went to the coast.",
         "Ana: Nice.", "Ben: Cool."],
        ["Ana: Any news on the new job?", "Ben: Yes, I start at the hospital in Leeds on "
         "Monday, as a ward nurse on nights.", "Ana: Wow.", "Ben: Yes."],
    ]  # fmt: skip
    ranked = [i for _, i in ranked_ids(conversation(embedder, sessions, {}), embedder,
                                       "Where does Ben work now?")]  # fmt: skip
    assert ranked[0] == "t5"


def test_relevance_is_between_0_and_1_and_falls_with_the_order(
    embedder: SentenceTransformerEmbedder,
) -> None:
    scores = [s for s, _ in ranked_ids(conversation(embedder, SESSIONS, {}), embedder, "pets")]
    assert scores == sorted(scores, reverse=True)
    assert all(0.0 <= s <= 1.0 for s in scores)


def test_a_question_asking_when_prefers_a_turn_that_names_a_time(
    embedder: SentenceTransformerEmbedder,
) -> None:
    question = "When did Jon get the puppy?"

    def lead(times: dict[int, str]) -> float:
        scores = {i: s for s, i in ranked_ids(conversation(embedder, SESSIONS, times), embedder,
                                              question)}  # fmt: skip
        return scores["t0"] - scores["t2"]

    assert lead({0: "2023-04-29"}) > lead({})
    # the more specific the time, the better it answers "when" (t2 names a year)
    day, month, year = (lead({0: t, 2: "2023"}) for t in ("2023-04-29", "2023-04", "2023"))
    assert day > month > year


def test_a_time_in_the_question_prefers_what_was_said_then(
    embedder: SentenceTransformerEmbedder,
) -> None:
    turns = conversation(embedder, SESSIONS, {})
    plain = [i for _, i in ranked_ids(turns, embedder, "What did Maya say?")]
    asked = [i for _, i in ranked_ids(turns, embedder, "What did Maya say on 9 May 2023?")]
    said_then = ("t4", "t5", "t6", "t7")  # the second session, a week after the first
    assert asked[0] in said_then
    assert all(asked.index(t) < plain.index(t) for t in said_then)


def test_a_time_that_dates_one_part_of_a_question_weighs_less_than_a_whole_questions_time(
    embedder: SentenceTransformerEmbedder,
) -> None:
    turns = conversation(embedder, SESSIONS, {})

    def lift(question: str) -> float:
        """How much naming 16 May raises a turn said that day (t9, "Where to?")."""
        dated = dict((i, s) for s, i in ranked_ids(turns, embedder, f"{question} on 16 May 2023?"))
        plain = dict((i, s) for s, i in ranked_ids(turns, embedder, f"{question}?"))
        return dated["t9"] - plain["t9"]

    assert lift("What pet did Jon get, and what did Maya say") < lift("What did Maya say")


@pytest.mark.parametrize(
    ("question", "parts"),
    [("What did Maya say in May?", 1), ("Who is Barb, and what did Linda do with her in June?", 2),
     ("How did the rate change between the first quote and December?", 2),
     ("How did her load change from March through to July?", 2),
     ("What is his name, what does he study, and what did he ask her in July?", 3),
     ("Did Jon and Maya meet in June?", 1)],
)  # fmt: skip
def test_the_parts_of_a_question_are_counted(question: str, parts: int) -> None:
    assert 1 + len(PARTS.findall(question)) == parts


def test_a_dated_reply_beside_the_turn_naming_the_event_answers_when(
    embedder: SentenceTransformerEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    sessions = [
        ["Maya: How are the twins?", "Jon: Loud. We took them to the zoo last Sunday.",
         "Maya: Ha, brave."],
        ["Maya: Is the baby here yet??", "Jon: Yes! A week ago today, at 3am.",
         "Maya: Congratulations! Boy or girl?",
         "Jon: A girl, Nora. The baby is perfect and sleeps all day."],
    ]  # fmt: skip
    turns = conversation(embedder, sessions, {1: "2023-04-30", 4: "2023-05-02"})

    def lead() -> float:
        """How far the dated reply (t4) leads the unrelated dated turn (t1)."""
        scores = {i: s for s, i in ranked_ids(turns, embedder, "When was Jon's baby born?")}
        return scores["t4"] - scores["t1"]

    with_answer = lead()
    monkeypatch.setitem(WEIGHTS, "answer", 0.0)
    assert with_answer > lead() > 0


def test_the_conversation_is_ordered_by_when_each_turn_was_said(
    embedder: SentenceTransformerEmbedder,
) -> None:
    turns = conversation(embedder, SESSIONS, {})
    assert [o.chunk_id for o in prepare(list(reversed(turns))).turns] == [o.chunk_id for o in turns]
    assert [o.chunk_id for o in prepare([]).turns] == []


@pytest.mark.parametrize(
    ("question", "asks"),
    [("When did Jon adopt the dog?", True), ("On what date was the party?", True),
     ("In which month did she move?", True), ("What pet did Jon get?", False),
     ("From what date did the shop trade as a company?", True),
     ("Since when has Ana lived in Porto?", True), ("Roughly when did they meet?", True),
     ("What was the date of the party?", True), ("How many weeks ago did she call?", True),
     ("How long has she worked there?", False), ("Which dog did they adopt?", False)],
)  # fmt: skip
def test_questions_asking_for_a_time_are_told_apart(question: str, asks: bool) -> None:
    assert bool(ASKS_WHEN.search(question)) is asks


def test_an_episode_s_times_read_back_at_their_granularity() -> None:
    found = mentioned("2023-05-13 2023-06 2022-06-01..2022-08-31 2021 not-a-time")
    assert [(m.label, m.granularity) for m in found] == [
        ("2023-05-13", "day"), ("2023-06", "month"), ("2022-06-01..2022-08-31", "season"),
        ("2021", "year"),
    ]  # fmt: skip


def test_a_group_is_prepared_once_and_its_span_read_from_the_cache() -> None:
    from api.services import recall

    cache = recall._prepared()
    assert recall._prepared() is cache  # one cache for the process, not one per question
    base = datetime(2026, 3, 1, tzinfo=UTC)
    turns = [
        IndexedObject(
            f"t{n}", Kind.EPISODE, f"t{n}", f"turn {n}", updated_at=base + timedelta(days=n)
        )
        for n in range(3)
    ]
    cache.put("acme:span", 3, turns)
    assert recall.said_span("acme:span") == (base, base + timedelta(days=2))
    cache.put(
        "acme:span",
        4,
        [
            *turns,
            IndexedObject("t3", Kind.EPISODE, "t3", "turn 3", updated_at=base + timedelta(days=9)),
        ],
    )
    assert recall.said_span("acme:span") == (base, base + timedelta(days=9))  # never stale


def test_a_question_naming_a_speaker_prefers_what_that_speaker_said(
    embedder: SentenceTransformerEmbedder,
) -> None:
    said = "My boss started last week and she is lovely."
    turns = conversation(embedder, [[said], [said]], {})  # a week apart: no shared window
    turns = [
        dataclasses.replace(t, metadata={"speaker": speaker})
        for t, speaker in zip(turns, ["Julia Nakamura", "Tessa Nakamura"], strict=True)
    ]
    for name, expected in (("Julia", "t0"), ("Tessa", "t1")):
        assert ranked_ids(turns, embedder, f"Who is {name}'s boss?")[0][1] == expected


def test_a_turn_is_found_by_a_name_said_two_turns_before_it_in_its_session() -> None:
    base = datetime(2026, 3, 1, tzinfo=UTC)
    texts = ["Ana: I hired a pastry chef called Lotte.", "Ben: Oh nice!",
             "Ana: She brought stroopwafels to the interview.", "Ben: Ha.",
             "Ana: Busy week at the shop."]  # fmt: skip
    said = [base + timedelta(minutes=n) for n in range(4)] + [base + timedelta(days=7)]
    turns = [
        IndexedObject(f"t{n}", Kind.EPISODE, f"t{n}", text, updated_at=when)
        for n, (text, when) in enumerate(zip(texts, said, strict=True))
    ]
    scores = prepare(turns).keywords.get_scores(terms("Lotte"))
    assert [bool(s > 0) for s in scores] == [True, True, True, False, False]


@pytest.mark.parametrize(
    ("question", "expected"),
    [("How did Nadia meet Keir?", [("Nadia", "How did I meet Keir?")]),
     ("What is Nadia's job, and does Nadia like it?",
      [("Nadia", "What is my job, and do I like it?")]),
     ("Who gave a card to Nadia?", [("Nadia", "Who gave a card to me?")]),
     ("Who helped Nadia move?", [("Nadia", "Who helped me move?")]),
     ("What present did Callum bring Nadia?",
      [("Callum", "What present did I bring you?"), ("Nadia", "What present did you bring me?")]),
     ("When did Nadia hurt her wrist?", [("Nadia", "When did I hurt my wrist?")]),
     ("Who replaced her after Nadia left?", [("Nadia", "Who replaced her after I left?")]),
     ("When did Nadia visit Ana at her flat?", [("Nadia", "When did I visit Ana at her flat?")]),
     ("Where is the shop?", []), ("Did Nadia tell Callum about Ana?", [
         ("Callum", "Did you tell me about Ana?"), ("Nadia", "Did I tell you about Ana?")])],
)  # fmt: skip
def test_a_question_naming_speakers_is_put_in_each_one_s_own_words(
    question: str, expected: list[tuple[str, str]]
) -> None:
    assert in_own_words(question, ["Nadia", "Callum", ""]) == expected


def test_a_question_naming_three_speakers_is_not_reworded() -> None:
    assert in_own_words("Did Nadia tell Callum about Ana?", ["Nadia", "Callum", "Ana"]) == []


def test_the_named_speaker_s_turns_are_also_read_against_the_question_in_their_words(
    embedder: SentenceTransformerEmbedder,
) -> None:
    turns = conversation(embedder, SESSIONS, {})
    turns = [dataclasses.replace(t, metadata={"speaker": t.text.split(":")[0]}) for t in turns]
    question = "What did Jon bring home?"
    [own] = in_own_words(question, prepare(turns).speakers)
    assert own == ("Jon", "What did I bring home?")
    vector, own_vector = embedder.encode([question, own[1]])
    plain = {o.chunk_id: s for s, o in rank(prepare(turns), question, vector, START)}
    read = {
        o.chunk_id: s
        for s, o in rank(prepare(turns), question, vector, START, [(*own, own_vector)])
    }
    jon = {t.chunk_id for t in turns if t.text.startswith("Jon:")}
    assert all(read[i] == plain[i] for i in plain if i not in jon)
    assert all(read[i] >= plain[i] for i in jon)
    assert any(read[i] > plain[i] for i in jon)


def test_a_turn_that_asks_counts_less_than_one_that_tells(
    embedder: SentenceTransformerEmbedder,
) -> None:
    sessions = [
        ["Ana: How is the new puppy settling in?", "Ben: The new puppy is settling in well."],
        ["Ana: Lisbon was lovely.", "Ben: Good to hear."],
    ]  # fmt: skip
    turns = conversation(embedder, sessions, {})

    def lead() -> float:
        scores = {i: s for s, i in ranked_ids(turns, embedder, "Is the puppy settling in?")}
        return scores["t1"] - scores["t0"]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("api.services.recall.PRIORS", dict(PRIORS, tells=0.0))
        without = lead()
    assert lead() > without
