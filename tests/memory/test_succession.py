"""A person who went hands what they held to the one named in their place; a later
statement of an account's relation stays with the subject it was stated of."""

from __future__ import annotations

from events.facts import RelationshipAsserted
from streams.memory.succession import Held, hold, successions
from tests.memory.test_speaker_memory import facts_of, holding

CONTACT = Held("Swiftlane Couriers", "organization", "contact")


def test_a_holder_who_left_passes_the_role_to_the_person_named_after() -> None:
    text = "Deepa has left Marston, so our broker contact there is Alan Fitzgerald now."
    people = [("Alan Fitzgerald", text.index("Alan"))]
    [s] = successions(text, people, {"Deepa Kulkarni": [CONTACT]}, speaker="Ruth Obi")
    assert (s.held, s.holder, s.successor) == (CONTACT, "Deepa Kulkarni", "Alan Fitzgerald")


def test_a_holder_named_by_title_and_surname_counts() -> None:
    text = "Mr Zulu has been transferred. Ms Thandeka Mthembu is ICT coordinator in his place."
    people = [("Thandeka Mthembu", text.index("Thandeka"))]
    [s] = successions(text, people, {"Sibusiso Zulu": [CONTACT]}, speaker="user")
    assert s.successor == "Thandeka Mthembu"


def test_no_succession_without_a_word_that_someone_went() -> None:
    text = "Deepa and Alan Fitzgerald will both be on the call."
    people = [("Alan Fitzgerald", text.index("Alan"))]
    assert successions(text, people, {"Deepa Kulkarni": [CONTACT]}, speaker="user") == []


def test_the_speaker_and_the_holder_are_never_their_own_successor() -> None:
    text = "Deepa Kulkarni has left, I'm Ruth Obi and I'll handle it."
    people = [("Deepa Kulkarni", 0), ("Ruth Obi", text.index("Ruth"))]
    assert successions(text, people, {"Deepa Kulkarni": [CONTACT]}, speaker="Ruth Obi") == []


def test_holding_a_role_takes_it_from_whoever_held_it() -> None:
    holders = {"Deepa Kulkarni": [CONTACT]}
    hold(holders, "Alan Fitzgerald", CONTACT)
    assert holders == {"Alan Fitzgerald": [CONTACT]}


async def test_the_new_contact_is_current_and_the_one_who_left_is_closed() -> None:
    contacts = await holding(
        "acme:swift",
        [
            "Hi, I'm Ruth Obi, operations manager at Swiftlane Couriers. Our broker contact "
            "at Marston is Deepa Kulkarni.",
            "Deepa has left Marston. Alan Fitzgerald takes her clients from Monday.",
        ],
        "contact",
    )
    assert contacts == {"Deepa Kulkarni": False, "Alan Fitzgerald": True}


async def test_a_later_plan_belongs_to_the_subject_whose_plan_was_stated_before() -> None:
    names, facts = await facts_of(
        "acme:rohan",
        [
            "Hi, Rohan Mehta here, procurement lead at Indus Bridge Consulting. I'm on the "
            "Silver plan with you.",
            "Good news, I've been upgraded to Gold.",
        ],
    )
    plans = {
        (names[f.source_entity_id], names[f.target_entity_id])
        for f in facts
        if isinstance(f, RelationshipAsserted) and f.relation_type == "plan"
    }
    assert {subject for subject, _ in plans} == {"Rohan Mehta"}
