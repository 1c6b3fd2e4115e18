"""The local extractor's speaker-aware statements, on the issue's own examples."""

from __future__ import annotations

import pytest

from streams.memory.english import nlp_available
from streams.memory.places import is_place
from streams.memory.rules import extract_local, speaker_of
from streams.memory.statements import Scope, introduced_name, replaced_value, statements


def facts(
    text: str, speaker: str = "Priya Raman", org: str | None = "Globex"
) -> set[tuple[str, str, str]]:
    return {(s.subject, s.relation, s.object) for s in statements(text, speaker, lambda: org)}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I live in Leeds.", ("Priya Raman", "lives_in", "Leeds")),
        ("I moved to Bristol last month.", ("Priya Raman", "lives_in", "Bristol")),
        ("My email is priya@globex.example.", ("Priya Raman", "email", "priya@globex.example")),
        ("I now work at Initech instead of Globex.", ("Priya Raman", "works_at", "Initech")),
        (
            "I changed my number, the new one is +44 7700 900456.",
            ("Priya Raman", "phone", "+44 7700 900456"),
        ),
        ("My new manager is Grace Okafor.", ("Priya Raman", "manager", "Grace Okafor")),
        ("We switched from Square to Stripe.", ("Globex", "uses", "Stripe")),
        ("Our data warehouse is Snowflake.", ("Globex", "uses", "Snowflake")),
        (
            "The migration finished today, everything is on BigQuery now.",
            ("Globex", "uses", "BigQuery"),
        ),
        ("Our billing contact is Sofia Alvarez.", ("Globex", "billing_contact", "Sofia Alvarez")),
        ("Initech is based in Leeds.", ("Initech", "located_in", "Leeds")),
        ("We're a team of 12 engineers.", ("Globex", "team_size", "12")),
        # a tenth set, written this session before the extractor was run on it
        ("We're a team of 14 at the moment.", ("Globex", "team_size", "14")),
        ("We've grown to 18 people since March.", ("Globex", "team_size", "18")),
        ("My phone is an iPhone 13.", ("Globex", "uses", "iPhone 13")),
        ("My watch is a Fitbit Sense.", ("Globex", "uses", "Fitbit Sense")),
        ("Our budget is about 5,000 pounds a year.", ("Globex", "budget", "5,000 pounds a year")),
        ("Finance cut the budget to 3,000 pounds, sorry.", ("Globex", "budget", "3,000 pounds")),
        (
            "We finished migrating off Azure, it's all Google Cloud now.",
            ("Globex", "uses", "Google Cloud"),
        ),
        ("We've replaced Zendesk with Freshdesk.", ("Globex", "uses", "Freshdesk")),
        # an eleventh set, written before running, after the tenth's rules
        ("I work in HR at Pellow Insurance.", ("Priya Raman", "works_at", "Pellow Insurance")),
        (
            "I'm writing on behalf of Greenway Logistics.",
            ("Priya Raman", "works_at", "Greenway Logistics"),
        ),
        (
            "We're a small charity, Brightsteps, with 9 volunteers.",
            ("Priya Raman", "works_at", "Brightsteps"),
        ),
        ("We now have 12 volunteers, by the way.", ("Globex", "team_size", "12")),
        ("QuickBooks does our invoicing now.", ("Globex", "uses", "QuickBooks")),
        (
            "We keep our donor records in Salesforce and send newsletters with Mailchimp.",
            ("Globex", "uses", "Mailchimp"),
        ),
        ("We've left Mailchimp for Buttondown.", ("Globex", "uses", "Buttondown")),
        # a twelfth set, written before running, after the eleventh's rules
        (
            "We're Atelier Lumen, an architecture practice in Lyon.",
            ("Priya Raman", "works_at", "Atelier Lumen"),
        ),
        ("We've just bought a house in Cardiff.", ("Priya Raman", "lives_in", "Cardiff")),
        (
            "My boss, Agnieszka Lis, wants the report by Friday.",
            ("Priya Raman", "manager", "Agnieszka Lis"),
        ),
        # a thirteenth set: places spaCy calls a person, and places said lowercase
        (
            "We're in Valencia and we're on the Family Max plan.",
            ("Globex", "located_in", "Valencia"),
        ),
        ("i live in lagos and i'm a freelance photographer", ("Priya Raman", "lives_in", "Lagos")),
        ("i've moved to abuja now so update my address pls", ("Priya Raman", "lives_in", "Abuja")),
        # chat's "i", "im" and "ive" read as "I", "I'm" and "I've"
        ("im on the starter plan", ("Priya Raman", "plan", "starter")),
    ],
)
def test_a_plain_statement_becomes_one_normalised_fact(
    text: str, expected: tuple[str, str, str]
) -> None:
    assert expected in facts(text)


@pytest.mark.parametrize(
    "text",
    [
        "Do you support Stripe?",
        "If I moved to Leeds, would my plan change?",
        "I don't use Slack.",
        "Could you tell me whether I work at the right office?",
    ],
)
def test_questions_hypotheticals_and_negations_state_nothing(text: str) -> None:
    assert facts(text) == set()


def test_a_plan_moved_up_to_is_no_place_and_a_tool_replaced_is_no_person() -> None:
    assert not {f for f in facts("We moved up to the Enterprise plan.") if f[1] == "lives_in"}
    assert not {f for f in facts("We've replaced Zendesk with Freshdesk.") if f[1] == "works_at"}
    # a department is neither a person at a company nor a place
    assert not {f for f in facts("I work in HR at Pellow.") if f[0] == "HR" or f[2] == "HR"}


def test_a_switch_names_the_value_it_replaces() -> None:
    [st] = [s for s in statements("We switched from Square to Stripe.", "Ana", lambda: None)]
    assert (st.object, st.replaces, st.changed) == ("Stripe", "Square", True)


def test_the_speaker_is_the_introduced_name_else_the_metadata_else_user() -> None:
    assert introduced_name("Hi, I'm Priya Raman, I work at Globex.") == "Priya Raman"
    assert introduced_name("I'm afraid the invoice is wrong.") is None
    assert speaker_of({"content": "User: Hi, this is Tom Berg from Acme."}) == "Tom Berg"
    known = {"content": "User: I live in Leeds.", "speaker": "Priya Raman"}
    assert speaker_of(known) == "Priya Raman"
    assert speaker_of({"content": "User: hi", "metadata": {"user_id": "u-17"}}) == "u-17"
    assert speaker_of({"content": "User: hi"}) == "user"


def test_our_shop_number_and_the_surgerys_number_are_the_organisations() -> None:
    assert ("Globex", "phone", "0161 496 0999") in facts(
        "The surgery's number changed to 0161 496 0999 after the merger."
    )
    assert ("Globex", "phone", "+45 31 55 72 04") in facts("Our shop number is +45 31 55 72 04.")


def test_a_lowercase_place_is_taken_only_when_it_is_a_known_place() -> None:
    assert not {f for f in facts("i live in the middle of nowhere") if f[1] == "lives_in"}
    assert is_place("Tromsø")
    assert is_place("valencia")
    assert not is_place("Salesforce")


def test_someone_named_after_a_possessive_and_a_comma_is_not_the_speaker() -> None:
    assert introduced_name("My boss, Agnieszka Lis, wants the report by Friday.") is None
    assert introduced_name("Hi, Tom Baker, operations lead at Harbour Freight.") == "Tom Baker"


def test_an_introduced_first_name_is_the_full_name_already_known() -> None:
    said = {"content": "User: I'm Sam, I run a bakery.", "metadata": {"user_name": "Sam O'Neill"}}
    assert speaker_of(said) == "Sam O'Neill"
    other = {"content": "User: I'm Sam, I run a bakery.", "metadata": {"user_name": "Ann Lee"}}
    assert speaker_of(other) == "Sam"


@pytest.mark.skipif(not nlp_available(), reason="spaCy's English pipeline is not installed")
def test_a_value_its_clause_denies_is_not_held_and_no_longer_names_the_old_one() -> None:
    out = extract_local(
        {
            "content": "User: I no longer work at Vossberg, I joined Kranich Labs in April.",
            "metadata": {"user_name": "Anika Bauer"},
        }
    )
    related = {(r.source, r.relation, r.target, r.replaces) for r in out.relationships}
    assert related == {("Anika Bauer", "works_at", "Kranich Labs", "Vossberg")}


def test_the_local_extractor_relates_the_speaker_across_an_episode_without_metadata() -> None:
    out = extract_local(
        {
            "content": "User: Hi, I'm Priya Raman, I work at Globex as a data engineer.\n"
            "Agent: Welcome!\nUser: Our billing contact is Sofia Alvarez.",
        }
    )
    related = {(r.source, r.relation, r.target) for r in out.relationships}
    assert related >= {
        ("Priya Raman", "works_at", "Globex"),
        ("Priya Raman", "role", "data engineer"),
        ("Globex", "billing_contact", "Sofia Alvarez"),
    }
    speaker = next(e for e in out.entities if e.name == "Priya Raman")
    assert speaker.attributes == {"speaker": "true"}


def test_the_english_pipeline_is_installed_with_its_weights() -> None:
    assert nlp_available()


def test_people_the_speaker_names_get_their_own_facts() -> None:
    said = facts(
        "Our finance lead, Tomas Varga, handles renewals. "
        "His email is tomas.varga@globex.example and he's based in Brno."
    )
    assert {
        ("Tomas Varga", "role", "finance lead"),
        ("Tomas Varga", "works_at", "Globex"),
        ("Tomas Varga", "email", "tomas.varga@globex.example"),
        ("Tomas Varga", "lives_in", "Brno"),
    } <= said


def test_a_contact_detail_belongs_to_whoever_the_words_point_at() -> None:
    assert ("Priya Raman", "phone", "+44 7700 900123") in facts(
        "You can text me, it's +44 7700 900123."
    )
    scope = Scope("Priya Raman", lambda: "Globex", people=["Ruth Adebayo"])
    [st] = statements("Send it to her: ruth@globex.example", "Priya Raman", scope=scope)
    assert (st.subject, st.relation, st.object) == ("Ruth Adebayo", "email", "ruth@globex.example")


def test_we_is_the_organisation_the_speaker_named_earlier_in_the_same_line() -> None:
    said = facts(
        "I'm the head of operations at Bluefin Cargo and we're on your Growth plan.", org=None
    )
    assert ("Bluefin Cargo", "plan", "Growth") in said
    assert ("Priya Raman", "works_at", "Bluefin Cargo") in said


def test_a_hostile_line_is_read_in_short_pieces_and_only_its_head() -> None:
    from streams.memory.english import READ_CHARS, SENTENCE_CHARS, sentences

    line = "A" * 90_000 + " I live in Leeds " + "Bbbb " * 20_000
    pieces = list(sentences(line))
    assert all(len(p) <= SENTENCE_CHARS for p in pieces)
    assert sum(len(p) for p in pieces) <= READ_CHARS
    assert facts("A" * 99_000) == set()


@pytest.mark.parametrize(
    ("line", "name"),
    [
        ("Hello — Haruka Sato. I'm an equine vet.", "Haruka Sato"),
        ("Good afternoon, Beatriz Oliveira here, executive chef.", "Beatriz Oliveira"),
        ("hey it's tomasz wójcik, i've got a desk here", "Tomasz Wójcik"),
        ("Hello, Thanks for the quick reply.", None),
        ("Yo, Kenji Tanaka here. Signed up in December.", "Kenji Tanaka"),
        ("Morning. Kofi Boateng, director of a small building firm.", "Kofi Boateng"),
        ("This is Dr. Helena Papadopoulos, member 4471.", "Helena Papadopoulos"),
        ("hey this is liam o'sullivan, account 55120934.", "Liam O'Sullivan"),
        ("The reader fails on contactless. - Aylin Öztürk, Simit Corner", "Aylin Öztürk"),
        ("Can you add my son to the policy? Thanks, Priya Raman", "Priya Raman"),
        ("The site is slow. Cheers, Tamar Levi - marketing lead", "Tamar Levi"),
        ("We moved to Stripe. Thanks, Stripe Support", None),
        ("Thanks, I will try that.", None),
        ("Kia ora, Hemi Walker here. We run a farm.", "Hemi Walker"),
        ("Hi all, Sofía Benítez from the Asunción office.", "Sofía Benítez"),
        ("Hola, soy Camila Restrepo! Training for a half.", "Camila Restrepo"),
        ("hi its Lan Nguyen, the internet is slow", "Lan Nguyen"),
        ("we are leaving Camden. after the move it's Walthamstow, E17.", None),
        ("Hi all, thanks for the help.", None),
        ("Tomás here. Router down again. The account is Tomás Ibarra.", "Tomás Ibarra"),
        ("Wiremu here, the farm office. Our vet is late.", "Wiremu"),
        ("Salut, Margaux Lefèvre ici. Je voudrais changer mon forfait.", "Margaux Lefèvre"),
        ("hey y'all, Dale Hutchins, owner of a bike shop in Tulsa.", "Dale Hutchins"),
        ("Dia dhuit, Siobhán Ní Bhriain here. We run a hostel.", "Siobhán Ní Bhriain"),
        ("hello, i am Joanna Wójcik, i run a bakery", "Joanna Wójcik"),
        ("Nobody here knows the wifi password.", None),
        ("The dashboard is blank again. Ingrid Solberg, office manager", "Ingrid Solberg"),
        ("The order came today. Blue Harbour Traders", None),
    ],
)
def test_greetings_and_sign_offs_introduce_the_speaker(line: str, name: str | None) -> None:
    assert introduced_name(line) == name


def test_a_person_is_never_a_tool_and_a_meeting_is_never_a_home() -> None:
    scope = Scope("Priya Raman", lambda: "Globex", people=["Dev Patel"])
    said = statements("We replaced Dev Patel with a new process. I'm in meetings all day.",
                      "Priya Raman", scope=scope)  # fmt: skip
    assert [(s.relation, s.object) for s in said] == []


def test_preferences_are_what_someone_would_rather_have() -> None:
    assert ("Priya Raman", "prefers", "aisle seat") in facts("I always prefer an aisle seat.")
    assert ("Priya Raman", "prefers", "email") in facts("Please email me rather than call.")
    assert ("Priya Raman", "prefers", "Mornings") in facts("Mornings are best for me.")


@pytest.mark.parametrize(
    ("sentence", "value", "old"),
    [
        ("We switched from Square to Stripe last week.", "Stripe", "Square"),
        ("And Sage is gone, we're on QuickBooks now.", "QuickBooks", "Sage"),
        ("From March we are switching accounting to enova365, Symfonia licence ends.",
         "enova365", "Symfonia"),
        ("We've ended the Clio contract; matters are in LEAP now.", "LEAP", "Clio"),
        ("Bank's changed too, we're with Tide now not Starling.", "Tide", "Starling"),
        ("Dropbox is cancelled - all project files sit on Vaultline now.", "Vaultline", "Dropbox"),
        ("We gave Mailchimp up, newsletters go out through Brevo.", "Brevo", "Mailchimp"),
        ("We use Slack and Jira.", "Jira", None),
        ("From Monday we also use Jira.", "Jira", None),
    ],
)  # fmt: skip
def test_a_change_names_the_value_it_replaces_before_or_after_it(
    sentence: str, value: str, old: str | None
) -> None:
    assert replaced_value(sentence, sentence, value, "uses") == old
