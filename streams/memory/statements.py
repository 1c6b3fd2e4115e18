"""Speaker-aware statements: the facts an ordinary conversation states, without a model.

The ``local`` provider's extraction reads each user line sentence by sentence (spaCy's
English pipeline when it is installed, else a punctuation split), skips what states
nothing (questions, hypotheticals, negations), and matches statement patterns:

* **first person**: "I live in Leeds", "I moved to Bristol last month", "my email is …",
  "I changed my number, the new one is …", "my new manager is Grace Okafor", "I'm on the
  Pro plan". The subject is the conversation's speaker: the name the user introduced
  ("Hi, I'm Priya Raman"), else ``metadata.user_name``, else ``metadata.user_id``,
  else ``user``;
* **first person plural**: "we use Snowflake", "we switched from Square to Stripe",
  "we're a team of 12". The subject is the speaker's organisation when one is known
  ("I work at Globex"), else the speaker;
* **third person**: "our billing contact is Sofia Alvarez", "my colleague Ewa Nowak",
  "Globex is based in Leeds".

Each statement becomes a relationship in an open, normalised vocabulary
(:data:`RELATIONS`), with its object's kind. Changes of value need no special case
for single-valued relations: the fold closes the current value when a different one is
stated later (:mod:`streams.memory.temporal`). What the words "instead of", "switched
from X to Y" or "replaced X with Y" name as the *old* value is kept as the fact's
``replaces`` attribute.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from streams.memory.english import (
    PARSED_CHARS,
    READ_CHARS,
    _parsed,
    _plain,
    english_doc,
    sentences,
)
from streams.memory.places import is_place
from streams.memory.temporal import EVERY

RELATIONS = {
    "works_at": "organization", "role": "concept", "lives_in": "place",
    "located_in": "place", "email": "contact", "phone": "contact", "manager": "person",
    "colleague": "person", "billing_contact": "person", "contact": "person",
    "uses": "product", "plan": "plan", "team_size": "quantity", "prefers": "preference",
    "owns": "product", "language": "concept", "timezone": "concept", "budget": "quantity",
    "birthday": "date",
}  # fmt: skip
"""The relations the local extractor states, with the kind of their object."""

SINGLE_VALUED = (
    "works_at", "role", "lives_in", "email", "contact", "phone", "manager",
    "billing_contact", "plan", "team_size", "language", "timezone", "budget", "birthday",
)  # fmt: skip
"""One current value per subject: a new one closes the old. ``located_in`` is not one
(an organisation has several sites), nor ``uses``: what they replace is named ("instead
of", "switched from X to Y")."""


_NAME_WORD = r"(?:[A-Z]|[ie](?=[A-Z]))[\w&'.-]*[\w&]"
"""A capitalised word of a name, or one spelled "iPhone", "eBay"."""
_NAME = rf"(?P<obj>{_NAME_WORD}(?:\s(?:of|de|la|van|von|du|&)\s{_NAME_WORD}|\s{_NAME_WORD}){{0,5}})"
_EMAIL = r"(?P<obj>[\w.+-]+@[\w-]+(?:\.[\w-]+)+)"
_PHONE = r"(?P<obj>\+?\d[\d ()-]{5,18}\d)"
_NUMBER = r"(?P<obj>\d[\d,]*)"
_PHRASE = r"(?P<obj>[A-Za-z][\w '&+-]{1,40}?)(?=\s*(?:[,.;!?]|$| at | for | in | and | but | now| since| from| instead| because))"
_NOW = r"(?:now |currently |still |actually |just |recently |officially )?"
_A = r"(?:an? |the |our |my )?"
_NEW = r"(?:new |current |updated |work |personal |main |primary |mobile |cell |direct )*"

_SENTENCE_SKIP = re.compile(r"(?i)^\s*(?:if|suppose|imagine|in case|what if|when i|should i|could i|can i|do you|does|is there|are there|would|will you|can you|could you)\b")  # fmt: skip
NEGATED = re.compile(r"(?i)\b(?:not|never|no longer)\b|n't\b")
CHANGE = re.compile(r"(?i)\b(?:now|moved|relocated|switched|changed|replaced|instead|new|no longer|upgraded|downgraded|as of|from now on|left|joined|migrated|started)\b")  # fmt: skip


@dataclass(frozen=True)
class Pattern:
    relation: str
    regex: re.Pattern[str]
    subject: str = "speaker"
    """``speaker``, ``we`` (the speaker's organisation) or ``named`` (the ``subj`` group)."""


def _p(relation: str, pattern: str, subject: str = "speaker") -> Pattern:
    return Pattern(relation, re.compile(pattern), subject)


_I = r"(?:\bI|\bi)"
_IM = r"(?:\bI'm|\bI am)"
_WE = r"(?:\b[Ww]e|\b[Ww]e're|\b[Ww]e are|\b[Ww]ere|\b[Oo]ur (?:team|company|business|office|firm|org|organisation|organization|shop|store|startup))"

_UPPER = "A-ZÀ-ÖØ-Þ"
_PWORD = rf"(?!I\b|I'|O'\s|(?:We|They|You|He|She|It|That|There|What|Who)'\w)(?:O'[{_UPPER}]\w+|Mc[{_UPPER}]\w+|[{_UPPER}](?:[\w-]|'(?!s\b))*\w)"
_PERSON = rf"(?!(?:HR|IT|PR|QA|UX|UI|R&D|ops|IT's)\b){_PWORD}(?: (?:de |van |von |da |del |le |bin |al-)?{_PWORD}){{0,2}}"
_WHO = rf"(?P<who>\bI\b|\b[Ww]e\b|\b[Hh]e\b|\b[Ss]he\b|{_PERSON})"
_POSS = rf"(?P<who>\b[Mm]y|\b[Hh]is|\b[Hh]er|\b[Oo]ur|{_PERSON}'s)"
_ROLE_HEAD = (
    r"(?:manager|director|lead|owner|founder|co-founder|coordinator|admin|administrator|"
    r"engineer|developer|designer|analyst|accountant|bookkeeper|assistant|consultant|partner|"
    r"officer|specialist|technician|nurse|doctor|teacher|coach|trainer|agent|buyer|recruiter|"
    r"architect|scientist|geologist|editor|producer|supervisor|CEO|CTO|CFO|CIO|COO|intern|"
    r"receptionist|chef|baker|pharmacist|lawyer|researcher|professor|lecturer|technologist|"
    r"representative|advisor|adviser|planner|controller|dispatcher|radiographer|pilot|vet|"
    r"translator|interpreter|headteacher|dev|adjuster|broker|surveyor|paramedic|solicitor|"
    r"dentist|physio|physiotherapist|therapist|midwife|carer|librarian|journalist|writer|"
    r"photographer|mechanic|electrician|plumber|clerk|secretary|cashier|barista|"
    r"head of [a-z]+(?: [a-z]+)?)"
)
_ROLE = (
    rf"(?P<obj>(?:(?:senior|junior|chief|principal|deputy|freelance|interim|acting|[A-Z]{{2,4}}|"
    rf"(?!new\b|our\b|the\b|my\b|their\b)[a-z]+) ){{0,3}}{_ROLE_HEAD})\b"
)
_ARTICLE = r"(?:the |a |an |our |my |their |his |her )?(?:new |current )?"
_PLACE = (
    rf"(?!(?:HR|IT|PR|QA|UX|UI|R&D)\b)(?P<obj>{_PWORD}(?: {_PWORD}){{0,2}})\b"
    rf"(?!(?: {_PWORD})* (?:plan|tier|package|subscription|edition|version|licen[cs]e|bundle)\b)"
)
"""A place; not a plan or an edition ("moved up to the Enterprise plan")."""
_LIVE_VERB = (
    r"(?:live|lives|living|reside|resides|based|moved|relocated|relocating|transferred|"
    r"working|works|work)(?: remotely| full-time| permanently)?(?: up| down| over| back| out)?"
)

_OWNER = rf"(?P<who>\b[Mm]y|\b[Oo]ur|\b[Yy]our|\b[Tt]heir|\b[Tt]he|{_PERSON}'s)"
_AT = rf"(?: (?:at|with|from) (?P<at>{_PWORD}(?: {_PWORD}){{0,3}}))?"
_SLOTS = {
    "manager": r"(?:line manager|manager|boss|supervisor|team lead|team leader)",
    "billing_contact": (
        r"(?:billing|finance|invoicing|invoice|accounts payable|accounts|payments) "
        r"(?:contact|person)"
    ),
    "contact": (
        r"(?:(?:main|primary|technical|tech|delivery|HR|account|support|day-to-day|IT|sales) )*"
        r"(?:point of contact|contact person|contact|person on my file|HR person|"
        r"account manager|account owner|rep|representative|liaison|(?:loss )?adjuster|"
        r"property manager|letting agent|vendor manager|service advisor|case (?:handler|worker|manager))"
    ),
}
_PERSON_OBJ = rf"(?P<obj>{_PERSON})"


def _slot(relation: str, slot: str) -> tuple[Pattern, ...]:
    """ "my manager is X", "X is our billing contact", "X took over as my manager", "she's
    the HR contact": who holds a position (the object) for whom (the owner)."""
    return (
        _p(relation, rf"{_OWNER} {_NEW}{slot}(?: here| there| now)?{_AT}(?:,| is| is now|'s|:)? {_NOW}{_PERSON_OBJ}", "owner"),
        _p(relation, rf"{_PERSON_OBJ}(?:, [^,]{{1,40}},)? (?:is|'s|has become|became|will be) {_NOW}(?P<who>my|our|your|their|the) {_NEW}{slot}{_AT}", "owner"),
        _p(relation, rf"{_PERSON_OBJ} (?:took over|has taken over|takes over|is taking over)(?: from \w+)? as (?P<who>my|our|your|their|the) {slot}", "owner"),
        _p(relation, rf"(?P<obj>\b[Hh]e|\b[Ss]he)(?:'s| is) {_NOW}(?P<who>my|our|your|their|the) {_NEW}{slot}{_AT}", "owner"),
    )  # fmt: skip


_LANGUAGES = (
    "English|French|German|Spanish|Portuguese|Italian|Dutch|Norwegian|Swedish|Danish|Finnish|"
    "Polish|Czech|Greek|Turkish|Arabic|Hebrew|Hindi|Urdu|Bengali|Tamil|Japanese|Korean|"
    "Mandarin|Cantonese|Chinese|Vietnamese|Thai|Indonesian|Malay|Russian|Ukrainian|Romanian|"
    "Hungarian|Swahili|Yoruba|Igbo|Hausa|Welsh|Irish|Catalan|Basque|Tagalog|Persian|Farsi"
)
_MONEY = (
    r"(?P<obj>(?:[A-Z]{3} ?|[$€£¥₹])\s?\d[\d,.]*(?: ?(?:million|thousand|k|m|bn))?"
    r"(?: (?:a|per) (?:month|year|week|head|person))?"
    r"|\d[\d,.]*(?: ?(?:million|thousand|k|m|bn))? (?:pounds|dollars|euros|quid|bucks|GBP|USD|EUR)"
    r"(?: (?:a|per) (?:month|year|week|head|person))?)"
)

_PREF = (
    r"(?:e-?mail|texts?|sms|phone(?: calls)?|calls?|whatsapp|WhatsApp|post|letters?|chat|"
    r"[Mm]ornings?|[Aa]fternoons?|[Ee]venings?|[Ww]eekends?|[Ww]eekdays?|"
    r"(?:[Mm]on|[Tt]ues|[Ww]ednes|[Tt]hurs|[Ff]ri|[Ss]atur|[Ss]un)days?)"
)
PATTERNS: tuple[Pattern, ...] = (
    # who the speaker works for, and as what
    _p("works_at", rf"{_I} {_NOW}(?:work|am working|'m working)(?: (?:in|on) (?:the )?[\w&-]+(?: [\w&-]+)?)? (?:at|for|with) {_NAME}", "speaker"),
    _p("works_at", rf"\b(?:writing|calling|emailing|messaging|contacting you|getting in touch|here|I'm|I am) on behalf of {_NAME}", "speaker"),
    _p("works_at", rf"\b[Ww]e(?:'re| are) {_NOW}(?:an? |the )?(?:[\w-]+ ){{0,3}}(?:charity|company|firm|agency|studio|shop|business|startup|practice|clinic|school|non-?profit|organi[sz]ation|bakery|restaurant|caf[eé]|store|consultancy|partnership|co-?op|cooperative|trust|foundation)(?:,| called| named) {_NAME}", "speaker"),
    _p("works_at", rf"{_IM} {_NOW}(?:working|employed) (?:at|for|with|by) {_NAME}", "speaker"),
    _p("works_at", rf"^\s*[Ww]e(?:'re| are) {_NAME}(?=,? (?:an?|the) )", "speaker"),
    _p("works_at", rf"{_I} {_NOW}(?:joined|started at|started working at|moved to work at) {_NAME}", "speaker"),
    _p("works_at", rf"{_IM} {_NOW}(?:with|at|from) {_NAME}(?=\s*(?:[,.;!]|$| as | and | now))", "speaker"),
    _p("works_at", rf"(?i:this is) {_PWORD}(?: {_PWORD})? (?:from|at|with) {_NAME}", "speaker"),
    _p("role", rf"{_I} {_NOW}(?:work|am working)(?: (?:at|for) {_NAME_WORD}(?: {_NAME_WORD})*)? as {_A}{_PHRASE}", "speaker"),
    _p("role", rf"{_IM} {_NOW}(?:an? |the )(?P<obj>(?:[a-z]+ ){{0,3}}(?:engineer|manager|developer|designer|analyst|director|lead|officer|admin|administrator|accountant|consultant|nurse|teacher|scientist|architect|owner|founder|coordinator|specialist|assistant|head of [a-z]+|intern|recruiter|buyer|technician))\b", "speaker"),
    _p("role", rf"(?i:my) {_NEW}(?:role|title|job title|position|job) is {_NOW}{_A}{_PHRASE}", "speaker"),
    _p("role", rf"{_I} (?:was |got |have been |'ve been )?promoted to {_A}{_PHRASE}", "speaker"),
    # where the speaker lives
    _p("lives_in", rf"{_I} {_NOW}(?:live|am living|'m living|reside|am based|'m based) in {_NAME}", "speaker"),
    _p("lives_in", rf"{_IM} {_NOW}(?:based|living|located) (?:in|near|out of) {_NAME}", "speaker"),
    _p("lives_in", rf"{_I} (?:have |'ve )?{_NOW}(?:moved|relocated) (?:house )?to {_NAME}", "speaker"),
    # said lowercase ("i live in lagos"): taken only when the words are a known place
    _p("lives_in", r"\b[Ii](?:'m|m| am|'ve| have)? (?:now |just |recently |currently )?(?:live|living|based|moved|relocated|staying) (?:in|to|near|out of) (?P<obj>[a-z][a-z-]+(?: [a-z][a-z-]+)?)", "speaker"),
    _p("lives_in", rf"(?:{_I}|\b[Ww]e)(?: have|'ve)? {_NOW}(?:bought|rented|moved into|got) (?:a|our|my|the) (?:new )?(?:house|flat|home|place|apartment|cottage) in {_PLACE}", "speaker"),
    _p("lives_in", rf"(?i:my) {_NEW}(?:home|address|flat|apartment|house) is (?:now )?in {_NAME}", "speaker"),
    # contact details
    _p("email", rf"(?i:my) {_NEW}e-?mail(?: address)? (?:is|has changed to|changed to|is now) {_NOW}{_EMAIL}", "speaker"),
    _p("email", rf"(?i:(?:reach|contact|email|mail) me) (?:at|on|via) {_EMAIL}", "speaker"),
    _p("email", rf"(?i:use) {_EMAIL} (?:from now on|instead|going forward|for me)", "speaker"),
    _p("phone", rf"(?i:my) {_NEW}(?:phone|number|mobile|cell)(?: number)? (?:is|has changed to|changed to|is now) {_NOW}{_PHONE}", "speaker"),
    _p("phone", rf"(?i:(?:call|text|reach|ring) me) (?:at|on) {_PHONE}", "speaker"),
    # people around the speaker
    _p("manager", rf"(?i:my) {_NEW}(?:manager|boss|line manager|supervisor|team lead) is {_NOW}{_NAME}", "speaker"),
    _p("manager", rf"{_I} {_NOW}report (?:directly )?to {_NAME}", "speaker"),
    _p("colleague", rf"(?i:my) (?:colleague|coworker|co-worker|teammate) {_NAME}", "speaker"),
    _p("billing_contact", rf"(?i:(?:our|the|my)) {_NEW}(?:billing|finance|invoicing|accounts) contact is {_NOW}{_NAME}", "we"),
    _p("billing_contact", rf"{_NAME} {_NOW}(?:handles|looks after|manages|takes care of) (?:our |the )?(?:billing|invoices|invoicing)", "we"),
    _p("contact", rf"(?i:(?:our|the|my)) {_NEW}(?:main |primary |technical |account )?(?:point of contact|contact person|contact) is {_NOW}{_NAME}", "we"),
    # what the speaker (or their organisation) uses, and on which plan
    _p("plan", rf"(?:{_IM}|{_WE}) {_NOW}on (?:the |a |an )?(?P<obj>[A-Z]\w*(?: [A-Z]\w*)?) (?:plan|tier|subscription|package)", "we"),
    _p("plan", r"(?i:(?:upgraded|downgraded))(?: (?:us|me|our account|the account))? to (?:the |a )?(?P<obj>[A-Z]\w*(?: [A-Z]\w*)?)(?: plan| tier| subscription| package| membership)?", "we"),
    _p("plan", r"(?i:(?:moved|switched|changed|went))(?: (?:us|me|our account|the account))? (?:over )?to (?:the |a |our |your )?(?P<obj>[A-Z]\w*(?: [A-Z0-9]\w*)?) (?:plan|tier|subscription|package|membership)", "we"),
    _p("plan", rf"(?i:(?:our|my)) {_NEW}(?:plan|tier|subscription) is {_NOW}(?:the )?(?P<obj>[A-Z]\w*(?: [A-Z]\w*)?)", "we"),
    _p("uses", rf"(?i:(?:switched|migrated|moved|changed)) (?:over )?from {_NAME_WORD}(?: {_NAME_WORD})? (?:over )?to {_NAME}", "we"),
    _p("uses", rf"(?i:replaced) {_NAME_WORD}(?: {_NAME_WORD})? with {_NAME}", "we"),
    _p("uses", rf"(?:{_I}|{_WE}) {_NOW}(?:use|uses|are using|am using|'re using|rely on|run on|run|have been using) {_NAME}", "we"),
    _p("uses", rf"(?:everything is|we're all|we are all|it's all) (?:now )?on {_NAME}", "we"),
    _p("uses", rf"(?:everything(?:'s| is)|it's all|it is all) (?:on |in )?{_NAME}(?= now\b)", "we"),
    _p("uses", rf"{_NAME} (?:now )?(?:does|handles|runs|takes care of|is doing|powers) (?:all )?(?:of )?(?:our|my) ", "we"),
    _p("uses", rf"(?:{_WE}|\bI|\band|\b[Ee]veryone|\b[Ee]verybody|\b[Tt]he team) {_NOW}(?:keep|keeps|store|stores|track|tracks|manage|manages|send|sends|do|does|run|runs|build|builds|make|makes|host|hosts|process|handle|handles|write|writes) (?:all )?(?:our |my |the )?(?:[\w-]+ ){{0,3}}?(?:in|on|with|through|via|using) {_NAME}", "we"),
    _p("uses", rf"(?i:left|dropped|ditched|swapped|traded|abandoned|dumped) {_NAME_WORD}(?: {_NAME_WORD})? for {_NAME}", "we"),
    _p("uses", rf"(?i:(?:our|my)) {_NEW}(?:[a-z]+ ){{0,2}}(?:tool|platform|provider|system|warehouse|crm|stack|software|processor|gateway|host|database|app|router|laptop|phone|bank|watch|smartwatch|tablet|mobile|computer|car|camera|printer|headset|console) is {_NOW}(?:an? )?{_NAME}(?P<model> \d{{1,3}}\b(?![,.]\d))?", "we"),
    _p("team_size", rf"{_WE} {_NOW}(?:have|are|'re|are now|'ve got|have got)? ?(?:a team of |a company of |about |around |roughly )?{_NUMBER} (?:people|engineers|developers|staff|employees|users|members|agents|seats|of us)", "we"),
    _p("team_size", rf"(?i:(?:team|company|headcount)) (?:is|has grown to|grew to|is now|went down to|shrank to|of) {_NOW}{_NUMBER}", "we"),
    _p("team_size", rf"\b[Ww]e(?:'re| are) {_NOW}(?:a team of|a company of|a staff of) {_NUMBER}\b", "we"),
    _p("team_size", rf"{_WE}(?:'ve| have) {_NOW}(?:grown|shrunk|gone (?:up|down)) to {_NUMBER} (?:people|staff|employees|engineers|of us)\b", "we"),
    _p("prefers", rf"{_I} (?:would |'d )?(?:prefer|like) (?:to be contacted |to hear from you |contact )?(?:by |via |over )(?P<obj>e-?mail|phone|text|sms|whatsapp|post|chat|slack)", "speaker"),
    _p("prefers", r"(?i:please) (?:only )?(?:contact|reach|message) me (?:by|via|over|on) (?P<obj>e-?mail|phone|text|sms|whatsapp|post|chat|slack)", "speaker"),
    _p("prefers", rf"{_I} (?:would |'d )?prefer {_A}(?P<obj>(?:morning|afternoon|evening|weekend|weekday|early|late) (?:appointments|slots|calls|meetings|deliveries))", "speaker"),
    _p("language", rf"(?i:my) (?:preferred |first )?language is {_NAME}", "speaker"),
    _p("timezone", rf"{_IM} (?:in|on) (?P<obj>[A-Z]{{2,5}}|[A-Z]\w+ time)\b", "speaker"),
    # organisations
    _p("located_in", rf"(?P<subj>[A-Z][\w&]+(?: [A-Z][\w&]+)*) (?:is|are) {_NOW}(?:based|located|headquartered) in {_NAME}", "named"),
    _p("located_in", rf"{_WE} {_NOW}(?:based|located|headquartered) in {_NAME}", "we"),
    # -- about the people and organisations a speaker names, or about the speaker in words
    #    the patterns above do not cover
    # preferences: what someone would rather have
    _p("prefers", rf"{_WHO}(?:'d| would)? (?:always |usually |much |really |also )?(?:prefers?|'d prefer|would prefer) (?:an? |the |to get |to have |having )?(?P<obj>[\w -]{{2,40}}?)(?= over\b| to \w+ ones\b| rather\b| than\b| if\b| when\b| because\b| as\b| so\b|[,.;!]|$)", "who"),
    _p("prefers", rf"\b(?P<obj>{_PREF})(?: [a-z]+)? (?:is|are|'s) (?:much |far |usually |always |the )?(?:best|better|ideal|easiest|easier|preferred)\b", "speaker"),
    _p("prefers", rf"\b(?P<obj>{_PREF}) (?:suits?|works?) (?:me|us) (?:much |far )?better", "speaker"),
    _p("prefers", r"\b(?P<obj>e-?mail|text|message|whatsapp|WhatsApp) (?P<who>me|her|him|us)\b[^.]{0,30}? (?:instead of|rather than)", "who"),
    _p("prefers", r"\b(?:by|on|over|via) (?P<obj>e-?mail|text|whatsapp|WhatsApp|sms|phone|post) (?:rather than|instead of)\b", "speaker"),
    *(pattern for relation, slot in _SLOTS.items() for pattern in _slot(relation, slot)),
    _p("billing_contact", rf"{_PERSON_OBJ} (?:has taken over|took over|is taking over|now handles|handles|looks after|manages) (?:the )?(?:billing|invoices|invoicing|the books)", "owner-we"),
    _p("timezone", rf"{_WHO}(?:'s|'re| is| am| are)? {_NOW}on (?P<obj>[A-Z]{{2,5}}|[A-Z]\w+ [Tt]ime)\b", "who"),
    _p("language", rf"(?P<obj>{_LANGUAGES}) is {_POSS} (?:first |native |preferred |main )?language", "who"),
    _p("language", rf"\bI (?:would |'d )?(?:prefer|speak|read|want [\w ]{{0,30}} in) (?P<obj>{_LANGUAGES})\b", "speaker"),
    _p("budget", rf"{_POSS} (?:[a-z]+ )?budget (?:is|of|for [\w ]{{1,30}} is)(?: now)?(?: about| around| roughly| up to)? {_MONEY}", "who"),
    _p("budget", rf"(?:[Bb]udget\b[\w ,]{{0,40}}? (?:is|of|at)|we've got|we have|covering|topped [\w ]{{0,20}}up to|bumped [\w ]{{0,20}}up to|(?:cut|reduced|raised|increased|trimmed) (?:the |our )?budget to|budget (?:was |has been |got )?(?:cut|reduced|raised|increased|trimmed) to)(?: now)?(?:,? (?:about|around|roughly|up to|tight))*,? {_MONEY}", "we"),
    # roles, with whom they belong to
    _p("role", rf"\bI'?m {_NOW}{_ARTICLE}{_ROLE}(?= (?:at|for|with|of|in|here|there)\b|[,.;!]|$)", "speaker"),
    _p("role", rf"\bI(?: was| got|'ve been| have been|'ve| have)? (?:promoted|stepped up|moved up) (?:to|as) {_ARTICLE}{_ROLE}", "speaker"),
    _p("role", rf"(?P<who>{_PERSON})(?: here)?\s*(?:,|\u2014|\u2013| -)\s*(?:I'm )?(?:an? |the )?{_ROLE}(?= (?:at|for|with|of|in|here|there)\b|[,.;!]|$)", "who"),
    _p("works_at", rf"(?P<who>{_PERSON})(?: here)?\s*(?:,|\u2014|\u2013| -)\s*(?:I'm )?(?:an? |the )?(?:[\w-]+ ){{0,3}}{_ROLE_HEAD} (?:at|for|with|of) {_NAME}", "who"),
    _p("role", rf"(?P<who>{_PERSON}),? (?:who'?s |who is )?(?:my|our|their|the|his|her) {_NEW}{_ROLE}", "who"),
    _p("role", rf"\b(?i:my|our|their|the|his|her) {_NEW}{_ROLE}(?: there| here)?,? (?P<who>{_PERSON})", "who"),
    _p("role", rf"{_WHO}(?: is|'s| was| has been) {_NOW}{_ARTICLE}{_ROLE}(?! is\b| was\b)", "who"),
    _p("role", rf"\b(?P<org>{_PWORD}(?: {_PWORD}){{0,3}})'s {_NEW}{_ROLE} is {_NOW}(?P<who>{_PERSON})", "who"),
    _p("role", rf"{_WHO} (?:took over|has taken over|takes over|replaced \w+|stepped in) as {_ARTICLE}{_ROLE}", "who"),
    _p("works_at", rf"\bI'?m {_NOW}{_ARTICLE}(?:[\w-]+ ){{0,3}}{_ROLE_HEAD} (?:at|for|with|of) {_NAME}", "speaker"),
    _p("works_at", rf"(?<!replaced )(?<!replacing )(?<!swapped )(?<!switched )(?P<who>{_PERSON}) (?:from|at|with) {_NAME}(?=\s*(?:[,.;!)]|$| and | is | who | has | said| told| here))", "who"),
    _p("works_at", rf"{_WHO} {_NOW}(?:works|worked|is working|'s working) (?:at|for) {_NAME}", "who"),
    _p("works_at", rf"{_WHO} (?:has |'s |have |'ve )?(?:now )?(?:left \S+(?: \S+)? (?:and|to) )?(?:joined|started at|transferred to) {_NAME}", "who"),
    # where people and organisations are
    _p("lives_in", rf"{_WHO}(?:'s|'re| is| are| has| have|'ve)? {_NOW}{_LIVE_VERB} (?:in|to|from|out of|near) (?:our |the )?{_PLACE}", "who"),
    _p("located_in", rf"\b(?:our|the|their) {_PLACE} (?:office|site|warehouse|branch|depot|team|studio|shop|store|clinic)\b", "we"),
    _p("located_in", rf"\b(?:warehouses?|offices?|sites?|branches|depots?|stores?|shops?) (?:in|at) {_PLACE}", "we"),
    # contact details of whoever is named or pointed at
    _p("email", rf"{_POSS} {_NEW}(?:e-?mail|email address|address|inbox)(?: address)? (?:is|has changed to|changed to|is now|:) {_NOW}{_EMAIL}", "who"),
    _p("email", rf"(?:reach|contact|email|e-mail|mail|cc) (?P<who>{_PERSON}|him|her) (?:at|on|via) {_EMAIL}", "who"),
    _p("email", rf"(?P<who>{_PERSON}) \(?{_EMAIL}", "who"),
    _p("phone", rf"{_POSS} {_NEW}(?:phone|number|mobile|cell|landline|extension)(?: number)? (?:is|has changed to|changed to|is now|:) {_NOW}{_PHONE}", "who"),
    _p("phone", rf"(?:call|text|reach|ring|phone) (?P<who>{_PERSON}|him|her) (?:at|on) {_PHONE}", "who"),
    # plans, head counts
    _p("plan", rf"(?:{_IM}|{_WE}) {_NOW}on (?:the|your|our) (?P<obj>(?!same\b|annual\b|monthly\b|yearly\b|current\b|old\b|new\b|right\b|wrong\b|cheapest\b|other\b)[a-z]+) (?:plan|tier)\b", "we"),
    _p("plan", rf"(?:{_IM}|{_WE}|\b[Ww]e've|\bI've) (?:got |have |chose |picked |bought )?{_NOW}(?:on )?(?:your |the |our |a )(?P<obj>[A-Z]\w*(?: [A-Z0-9]\w*)?) (?:plan|tier|subscription|package|membership)", "we"),
    _p("plan", rf"(?:{_IM}|{_WE}) {_NOW}on (?:your |the )?(?P<obj>[A-Z]\w*(?: [A-Z0-9]\w*)?)(?= now\b.*(?:upgrad|downgrad|plan|tier)|,? (?:now,? )?(?:upgrad|downgrad|since))", "we"),
    _p("team_size", rf"\b[Tt]here (?:are|'re) (?:now |currently |about |around |roughly |only |just )*{_NUMBER} (?:of us|people|staff|employees)", "we"),
    _p("team_size", rf"(?:{_WE}|team|staff|headcount|\bIT|office|shop) (?:is |are |'re )?(?:now |currently |down to |up to |about |around |roughly |only |just )*{_NUMBER} (?:people|staff|employees|engineers|agents|drivers|seats|users|members|of us|volunteers|workers|nurses|teachers|developers)\b", "we"),
    _p("team_size", rf"(?:{_WE}|,) (?:now )?(?:have |with |of )(?:now )?(?:about |around |roughly |over |nearly )?{_NUMBER} (?:people|staff|employees|volunteers|workers|members of staff)\b", "we"),
    _p("team_size", rf"(?:{_WE}) (?:now |currently )?{_NUMBER}(?= now\b| people\b|[,.;]|$)", "we"),
    _p("team_size", rf"\b{_NUMBER} (?:of us|people|agents|engineers|staff) (?:on|in) (?:the |our )?(?:team|IT|office|shop|support)", "we"),
    # where the speaker (or whoever a clause is about) is based
    _p("lives_in", rf"(?:^|[,\u2014\u2013-] ?)(?:currently |now )?(?:living|based|working out of|working from) in {_PLACE}", "fragment"),
    _p("lives_in", rf"\b(?P<who>who)(?:'s| is) {_NOW}(?:based|living|located) in {_PLACE}", "who"),
    _p("works_at", rf"(?P<who>{_PERSON}) here (?:from|at|with) {_NAME}", "who"),
    _p("works_at", rf"\bI (?:head up|run|lead|manage) (?:the )?(?:[a-z]+ ){{1,3}}(?:team|department|desk|group|office) (?:at|for) {_NAME}", "speaker"),
    _p("works_at", rf"{_WHO}(?:'s been| has been| is now| 's now) (?:at|with) {_NAME}(?= for| since|[,.;!]|$)", "who"),
    # what is used
    _p("uses", rf"(?:{_I}|{_WE}) (?:'ve |have )?{_NOW}(?:switched|migrated|changed)(?: everything| it| us)?(?: over)? to {_NAME}", "we"),
    _p("uses", rf"(?:replaced|swapped) (?:the |our |my )?{_NAME_WORD}(?: {_NAME_WORD})?(?: \w+)? (?:with|for) (?:a |an |the )?{_NAME}", "we"),
    _p("uses", rf"{_NAME} instead of", "we"),
    _p("uses", rf"(?:runs|run|running|is|are) (?:now |all |entirely )*on {_NAME}", "we"),
    _p("uses", rf"(?:our|my) {_NEW}(?:[a-z]+ ){{0,2}}(?:tool|platform|provider|system|warehouse|crm|CRM|stack|software|processor|gateway|host|database|app|router|laptop|phone|bank|reader|till|POS|helpdesk|editor|tracker|calendar)(?:, which)? is {_NOW}{_NAME}", "we"),
    _p("uses", rf"(?:{_I}|{_WE}) (?:do|track|manage|run|keep|log|draw|design|build|write|host|handle|process) (?:all |everything |most )?(?:[a-z]+ ){{0,3}}(?:in|on|with|through) {_NAME}", "we"),
    _p("works_at", rf"\bI (?:own|run|founded|co-founded|started|manage) (?:a |an |the |my )?(?:[\w'-]+ ){{0,6}}?(?:called|named) {_NAME}", "speaker"),
    _p("works_at", rf"\bI'?m {_NOW}{_ARTICLE}(?:[\w-]+ ){{0,3}}{_ROLE_HEAD} (?:with|at|for) (?P<obj>them|there)\b", "speaker"),
    _p("located_in", rf"(?P<who>{_PERSON})(?:,| is| -)? (?:an? [\w' -]{{0,40}}? )?(?:based |located |headquartered )?(?:up |down |over |here |out )?(?:in|out of) {_PLACE}", "org-named"),
    _p("located_in", rf"(?:\b[Ww]e're|\b[Ww]e are|\b[Ii]t's|\b[Ii]t is) (?:an? |the )?(?:[\w'-]+ ){{0,4}}?(?:based |located )?(?:up |down |over |out )?in {_PLACE}", "we-place"),
    _p("located_in", rf"\b(?:our|the|their) {_PLACE} (?:staff|HQ|headquarters|plant|lab|hub|team)\b", "we"),
    _p("uses", rf"(?:moved|migrated|switched|changed|ported)(?: [a-z]+){{0,4}} (?:from|off|out of) {_NAME_WORD}(?: {_NAME_WORD})?(?: [a-z]+)?,? (?:over |and )?(?:to|into|onto) {_NAME}", "we"),
    _p("uses", rf"(?:[Oo]ur|[Mm]y|[Yy]our) {_NAME} (?:integration|subscription|account|reader|terminal|service|app|licen[cs]e|instance|workspace|units|devices|MDM|system)\b", "we"),
    _p("uses", rf"\b(?:go|goes|going|come in|comes in|coming in|dispatch|dispatches|send|sends|process|processes|run|runs|pay|sell|book|sync|syncs|order)(?: [a-z]+){{0,3}} (?:through|via) {_NAME}", "we"),
    _p("uses", rf"(?:everything|it|all)(?:'s| is) (?:now |all )?on {_NAME}", "we"),
    # plans named by what they are, whoever is on them
    _p("plan", r"\bon (?:the |your |our |a )?(?P<obj>[A-Z]\w*(?: [A-Z0-9]\w*)?) (?:plan|tier|cover|package|membership|subscription|contract)\b", "we"),
    _p("plan", r"\b(?:got|have|signed|bought|booked) (?:a |an |the |your |our )?(?P<obj>[A-Z]\w*(?: [A-Z0-9]\w*)?) (?:plan|tier|cover|package|membership|subscription|contract)\b", "we"),
    # employers and jobs said in passing
    _p("works_at", rf"{_WHO}(?: is|'s| was)? (?:now |also )?(?:an? |the )(?!member\b|customer\b|client\b|patient\b|regular\b|guest\b|fan\b)(?:[\w-]+ ){{0,3}}?[a-z-]+ (?:at|for|with) (?:the )?{_NAME}", "who"),
    _p("role", rf"{_WHO}(?: is|'s| was) (?:now |also )?(?:an? |the )(?P<obj>(?!member\b|customer\b|client\b|patient\b|regular\b|guest\b|fan\b)(?:[a-z-]+ ){{0,2}}[a-z-]+) (?:at|for|with) (?:the )?[A-Z]", "who"),
    _p("works_at", rf"(?P<who>{_PERSON}) (?:of|from) (?:the )?{_NAME}(?=\s*(?:[,.;!)]|$| and | is | who | has ))", "who"),
    _p("works_at", rf"{_WHO} {_NOW}(?:works|worked|is working|'s working) (?:at|for) the {_NAME}", "who"),
    _p("works_at", rf"\bI (?:run|own|manage|co-own) {_NAME}", "speaker"),
    _p("works_at", rf"{_WHO}(?:'s been| has been| is| 's) (?:with|at) (?P<obj>us)\b", "who"),
    # where people stay
    _p("lives_in", rf"(?P<who>\bwho|\b[Hh]e|\b[Ss]he|\bI|\b[Ww]e)(?:'s|'re| is| are|'m| am) (?:now |still |back |currently |also |properly |out )*in {_PLACE}(?! (?:office|team|site|depot|branch))", "who-in"),
    _p("lives_in", rf"\b(?:[Mm]y|[Oo]ur) (?:flat|house|home|place|apartment|address)(?: here)? in {_PLACE}", "speaker"),
    _p("lives_in", rf"(?:\bI'm|\b[Ww]e're|\bI am|\b[Ww]e are|\bI|\b[Ww]e) (?:now |currently |still )?(?:staying|renting|rent|living|live)(?: [\w' ]{{0,40}}?)? in {_PLACE}", "speaker"),
    _p("lives_in", rf"(?:\bI|\b[Ww]e)[\w' ]{{0,40}}? \d+[A-Za-z]? (?:{_PWORD} )+(?:Road|Rd|Street|St|Avenue|Ave|Lane|Close|Drive|Way|Place|Square|Court|Gardens|Terrace|Crescent),? in {_PLACE}", "speaker"),
    # organisations' offices
    _p("located_in", rf"\b(?P<who>[Oo]ur|[Tt]heir|[Yy]our) (?:head |main |new )?(?:office|HQ|headquarters|practice|clinic|studio|shop|store|warehouse|depot|site|base)(?: is| are|'s)? (?:now |still )?(?:in|based in|located in) {_PLACE}", "owner"),
    _p("located_in", rf"\b(?:moved|relocated) (?:the |our )?(?:practice|office|head office|HQ|business|shop|store|company|clinic|studio|warehouse|depot) to {_PLACE}", "we"),
    _p("located_in", rf"\b(?:[Hh]ead office|[Oo]ffice|HQ|[Pp]ractice|[Cc]linic|[Ss]tudio|[Ww]arehouse) (?:has )?(?:moved|relocated) to {_PLACE}", "we"),
    _p("located_in", rf"\b(?:at|in) (?P<who>your|our|their) {_PLACE} (?:office|site|depot|branch|studio|clinic|warehouse)\b", "owner"),
    # tools
    _p("uses", rf"(?:signed up (?:to|for|with)|trialling|trialing|trying out|subscribed to|switched over to|moved (?:[\w]+ ){{0,4}}onto|ditched \w+(?: \w+)? for|run everything (?:off|on)|(?:already |also )?use|rely on) {_NAME}", "we"),
    _p("uses", rf"\b(?:invoice|invoices|post|posts|go out|goes out|book|books|sell|sells|ship|ships|pay|pays)(?: [a-z]+){{0,3}} (?:through|via|to|on) {_NAME}", "we"),
    _p("uses", rf"(?:everything|all|it|[a-z]+)(?:'s| is| are| lives| live) (?:now |all )*(?:in|on) {_NAME}(?= now\b| at the moment\b|[,.;!]|$)", "we"),
)  # fmt: skip
PATTERNS = tuple(sorted(PATTERNS, key=lambda p: p.relation != "works_at"))  # fmt: skip
"""Statement patterns, most specific first within a relation; where people work first,
so that "we" in the rest of a sentence knows its organisation."""

_REPLACED = re.compile(
    r"(?i:instead of|rather than|from|off|out of|away from|replaced|replacing|dropped|dropping|"
    r"ditched|ditching|closed|leaving|left|swapped|swapping|retired|retiring|sold|selling|"
    r"no longer (?:at|with|on|use|using|(?:work|working|based|living|live) (?:at|for|with|in)))"
    r"\s+(?:the |our |my )?"
    rf"(?P<old>{_NAME_WORD}(?: {_NAME_WORD})?|[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\+?\d[\d ()-]{{5,}}\d)"
)

_GONE = re.compile(
    rf"(?:(?i:gave|given|giving) (?:the |our |my )?(?P<old>{_NAME_WORD}(?: {_NAME_WORD})?) up\b|"
    r"(?i:stopped using|got rid of|cancelled|canceled) (?:the |our |my )?"
    rf"(?P<old2>{_NAME_WORD}(?: {_NAME_WORD})?)|"
    rf"(?P<old3>{_NAME_WORD}(?: {_NAME_WORD})?)(?: is|'s| has)? (?:finally )?"
    r"(?i:gone|out|history|dead|died|finished|cancell?ed|canceled)\b|"
    rf"(?P<old4>{_NAME_WORD}(?: {_NAME_WORD})?) (?i:licen[cs]e|contract|subscription) "
    r"(?i:ends|ended|expired|is over|has ended|has expired)\b|"
    r"(?i:ended|cancell?ed|stopp?e?d?|stop|stopping) (?:the |our |my )?"
    rf"(?P<old5>{_NAME_WORD}(?: {_NAME_WORD})?)(?: (?i:contract|subscription|licen[cs]e|account))?|"
    rf"(?i:now,? not) (?P<old6>{_NAME_WORD}(?: {_NAME_WORD})?))"
)
"""An old value said gone after it is named ("Sage is gone", "we gave Mailchimp up")."""


def _old_of(match: re.Match[str]) -> str:
    old = next(v for k, v in match.groupdict().items() if k.startswith("old") and v)
    return _LEADING_WORD.sub("", old)


_LEADING_WORD = re.compile(r"^(?:And|But|So|Also|Then|Now|Well|Oh|Yes|No|Plus|The|Our|My)\s+")
"""A sentence's first word, capitalised as a name is ("And Sage is gone"): not the name."""


def replaced_value(sentence: str, text: str, value: str, relation: str) -> str | None:
    """The old value a statement of ``value`` says it replaces ("we're leaving AWS for
    Nordlys Cloud", "replaced PagerDuty with Opsgenie"), from its sentence, or, for a
    many-valued relation said as a change, from the rest of the turn ("… off Crowdin -
    everything's in Lokalise now"); :data:`~streams.memory.temporal.EVERY` for a move
    ("we relocated the studio to Limassol"); None when it names none."""
    names = [_old_of(m) for m in (*_REPLACED.finditer(sentence), *_GONE.finditer(sentence))]
    if not names and relation not in SINGLE_VALUED and CHANGE.search(sentence):
        names = [_old_of(m) for m in _REPLACED.finditer(text)]
    old = next((n for n in names if n != value and n not in value and n not in _WHEN_WORDS), None)
    if old is None:
        return EVERY if relation in MOVES and MOVED.search(sentence) else None
    return _clean(old)


_WHEN_WORDS = frozenset(
    [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
        "Monday",
        "Tuesday",
        "Wednesday",
        "Thursday",
        "Friday",
        "Saturday",
        "Sunday",
        "Christmas",
        "Easter",
    ]
)
"""Not values a change replaces ("from March we are switching…")."""


MOVES = ("located_in",)
"""Many-valued relations a move replaces whole: an organisation that says it moved is no
longer where it was, though it names none of its old sites (:data:`MOVED`)."""
MOVED = re.compile(r"(?i)\b(?:we(?:'ve| have)? (?:moved|relocated)|(?:moved|relocated) "
                   r"(?:the |our )?(?:office|offices|studio|shop|workshop|practice|business|"
                   r"company|head office|headquarters|HQ|premises|site|team|warehouse|clinic|"
                   r"store|restaurant|school|kitchen|factory|base)|(?:office|studio|shop|"
                   r"practice|head office|headquarters|HQ|premises|clinic|store) "
                   r"(?:has |have )?(?:moved|relocated))\b")  # fmt: skip


_TITLE = r"(?:(?:Dr|Prof|Mr|Mrs|Ms|Mx)\.?\s+|Miss\s+)?"
_INTRO = re.compile(
    r"(?:\b(?:[Mm]y name is|[Mm]y name's|[Tt]his is|[Ii]t's|[Ii]ts|[Ii] am|[Ii]'m|Im|[Cc]all me|[Nn]ame's|"
    r"[Ss]oy|[Jj]e suis|[Ii]ch bin|[Mm]i chiamo|[Ee]u sou)\s+)"
    rf"{_TITLE}(?P<name>{_PWORD}(?:[ -]{_PWORD}){{0,2}})"
)
_NOT_NAMES = frozenset(
    {"Here", "Back", "Not", "Just", "Still", "Now", "Calling", "Writing", "Looking", "Trying",
     "Sorry", "Fine", "Good", "Happy", "Afraid", "New", "Based", "On", "In", "With", "From",
     "Nobody", "Everyone", "Everybody", "Someone", "Somebody", "Anyone", "Anybody", "All",
     "Everything", "Nothing", "Something", "Same", "Life", "Winter", "Summer", "Spring"}
)  # fmt: skip
_OBJECT_TRIM = re.compile(r"[\s,.;:!?'\"]+$")
_OBJECT_LEAD = re.compile(r"^(?:the|a|an|our|my)\s+", re.IGNORECASE)


@dataclass(frozen=True)
class Statement:
    """One fact a sentence states."""

    subject: str
    relation: str
    object: str
    object_kind: str
    evidence: str
    replaces: str | None = None
    changed: bool = False
    """The sentence carries a change cue ("now", "moved to", "instead of", …)."""
    subject_kind: str = "person"


_LOWER_INTRO = re.compile(
    r"^(?:(?:hi|hey|hello|hiya)[,!]?\s+)?(?:[Ii]'m|im|[Ii] am|it's|its|this is|my name is|my name's)\s+"
    r"(?P<name>[a-zà-ÿ][a-zà-ÿ']+(?: [a-zà-ÿ][a-zà-ÿ']+){1,2})(?=\s*(?:,|\.|$| here\b| from\b))"
)
_COMMON = frozenset(
    [
        "a",
        "an",
        "the",
        "just",
        "not",
        "so",
        "very",
        "really",
        "still",
        "also",
        "here",
        "there",
        "now",
        "back",
        "sorry",
        "new",
        "trying",
        "looking",
        "writing",
        "calling",
        "wondering",
        "having",
        "getting",
        "going",
        "back",
        "stuck",
        "confused",
        "fine",
        "good",
        "happy",
        "glad",
        "afraid",
        "sure",
        "ok",
        "okay",
        "about",
        "with",
        "from",
        "for",
        "on",
        "in",
        "at",
        "and",
        "but",
        "or",
        "to",
        "of",
    ]
)
_GREETING = (
    r"(?:[Hh]i|[Hh]ey|[Hh]ello|[Hh]iya|[Hh]owdy|[Yy]o|[Gg]ood (?:morning|afternoon|evening)|"
    r"[Mm]orning|[Aa]fternoon|[Ee]vening)\b[,!]?\s*(?:[-\u2013\u2014]\s*)?"
)
_OPENER = (
    rf"(?:{_GREETING}|(?!(?:[Mm]y|[Oo]ur|[Yy]our|[Hh]is|[Hh]er|[Tt]heir|[Tt]he)\b)"
    r"[A-Za-z][a-z]*(?: [a-z']+)?[,!.]\s+)"
)
"""A greeting, or any word or two closed by a comma ("Howya,", "Kia ora,", "Hi all,");
not someone else named after a comma ("My boss, Agnieszka Lis, wants …")."""
_PARTICLE = r"(?:Ó|Ní|Nic|Mac|de|van der|van den|van|von|da|del|de la|le|bin|al-)"
_HERE = re.compile(
    rf"^{_OPENER}?(?P<name>{_PWORD}(?: (?:{_PARTICLE} )?{_PWORD}){{0,2}}) (?:here|ici|hier|aquí)\b"
)
"""An opening "Priya Raman here", "Rafael here", "Agnès Dubois ici"."""
_GREETED = re.compile(rf"^{_GREETING}(?P<name>{_PWORD}(?: {_PWORD}){{1,2}})\s*[.,!](?:\s|$)")
_TEAMS = frozenset({"Support", "Team", "Service", "Services", "Desk", "Customer", "Ltd", "Inc"})
_OPENED = re.compile(
    rf"^{_OPENER}[.!]?\s*{_TITLE}(?P<name>{_PWORD}(?: {_PWORD}){{1,2}})(?:,| from| of)\s"
)
"""A message opening with a greeting and then a full name and a comma or "from" ("Morning.
Kofi Boateng, director of …", "Hi all, Sofía Benítez from the Asunción office")."""
_SIGNED = re.compile(
    r"(?:^|(?<=[\s.!?]))(?:[-\u2013\u2014]\s*|(?:[Tt]hanks(?: again| so much| in advance)?|"
    r"[Tt]hank you|[Cc]heers|[Bb]est(?: wishes| regards)?|(?:[Kk]ind |[Ww]arm |[Mm]any )?"
    r"[Rr]egards|[Mm]any thanks|[Ss]incerely|[Yy]ours(?: sincerely| truly)?)[,!.]?\s+"
    rf"(?:[-\u2013\u2014]\s*)?){_TITLE}(?P<name>{_PWORD}(?: {_PWORD}){{1,2}})"
    r"(?:\s*[,(\-\u2013\u2014][^.!?\n]{0,60})?[.!]?\s*$"
)
"""A message signed at its end ("… Thanks, Priya Raman", "- Aylin Öztürk, Simit Corner",
"Cheers, Tamar Levi - marketing lead")."""


def introduced_name(text: str) -> str | None:
    """The name a speaker introduces themself with ("Hi, I'm Priya Raman", "Dana
    Whitfield here"), if any."""
    text = _plain(text)
    for intro in (_HERE, _GREETED, _OPENED):
        here = intro.match(text.strip())
        if here and not set(here.group("name").split()) & _NOT_NAMES:
            name = here.group("name")
            if " " not in name:  # "Rafael here. … the account is Rafael Oliveira"
                full = re.search(rf"\b{re.escape(name)} (?:{_PARTICLE} )?{_PWORD}\b", text)
                name = full.group(0) if full else name
            return name
    low = _LOWER_INTRO.match(text.strip())
    if low and not any(w in _COMMON for w in low.group("name").split()):
        return low.group("name").title()
    for m in _INTRO.finditer(text):
        name = m.group("name")
        first = name.split()[0]
        if first in _NOT_NAMES:
            continue
        if m.start() > 20 and m.group(0)[:2].casefold() == "it":
            continue  # "after the move it's Walthamstow": only an opening "it's" is a name
        follows = text[m.end() : m.end() + 12]
        if re.match(r"\s+(?:from|at|with|here|speaking|,|\.|$)", follows) or "," in follows[:2]:
            return name
        if len(name.split()) >= 2:
            return name
    signed = _SIGNED.search(text.strip())
    if signed and not set(signed.group("name").split()) & (_NOT_NAMES | _NOT_A_NAME | _TEAMS):
        return signed.group("name")
    bare = _SIGNED_BARE.search(text.strip())
    if bare and len(text) <= PARSED_CHARS:
        doc = english_doc(text)
        name = bare.group("name")
        if doc is not None and any(e.label_ == "PERSON" and e.text == name for e in doc.ents):
            return name
    return None


_SIGNED_BARE = re.compile(
    rf"(?<=[.!?])\s+{_TITLE}(?P<name>{_PWORD}(?: {_PWORD}){{1,2}})"
    r"(?:\s*,\s*[^.!?\n]{0,60})?[.!]?\s*$"
)
"""A message signed with a bare name after its last sentence ("… it's all on paper.
Fiona MacLeod, volunteer coordinator"): a name only when spaCy reads it as a person."""


def _clean(value: str) -> str:
    value = _OBJECT_TRIM.sub("", value.strip())
    return _OBJECT_LEAD.sub("", value).strip()


_QUESTION_TAIL = re.compile(
    r",\s*(?:and |so |but )?(?:can|could|would|will|do|does|did|is|are|should|may|might)"
    r"\s+(?:you|we|i|it|they|someone|anyone)\b[^,]*\?\s*$",
    re.IGNORECASE,
)


def _statement_part(sentence: str) -> str:
    """ "We upgraded to Growth this morning, can you check the seats?": the statement
    before a question tacked on after a comma."""
    tail = _QUESTION_TAIL.search(sentence)
    return sentence[: tail.start()] + "." if tail and tail.start() > 0 else sentence


def _states_nothing(sentence: str) -> bool:
    return sentence.rstrip().endswith("?") or bool(_SENTENCE_SKIP.search(sentence))


_SWITCH = re.compile(r"(?i)\b(?:replac|switch|swapp?|migrat|left\b|dropp?|ditch|trad)\w*\b")
"""A tool switched to: a name spaCy calls a person ("Freshdesk") is the tool."""
_NOT_A_NAME = frozenset(
    {"Dr", "Mr", "Mrs", "Ms", "Miss", "Prof", "Sir", "Dame", "The", "Our", "This", "That", "Also", "Quick", "Please", "Thanks", "Thank", "Hi", "Hello",
     "Hey", "Just", "So", "And", "But", "Then", "Now", "Since", "After", "Before", "Everything",
     "Everyone", "It", "There", "Here", "They", "Your", "My", "One", "Anyway", "Oh", "Ok",
     "Okay", "Yes", "No", "Well", "Update", "Note", "Which", "What", "Who", "When", "Where",
     "Good", "Great", "Sorry", "Actually", "Unfortunately", "Luckily", "Sadly", "Apparently",
     "As", "From", "In", "On", "At", "For", "With", "By", "To", "If", "Last", "Next",
     "Today", "Yesterday", "Tomorrow", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday",
     "Saturday", "Sunday", "Both", "All", "Some", "Each", "Every", "Any", "Another", "Other",
     "Their", "His", "Her", "Its", "We", "He", "She", "I", "Me", "Us", "Him", "Them", "Dear",
     "Right", "Sure", "Cheers", "Regards", "Best", "Morning", "Afternoon", "Evening",
     "Back", "Buongiorno", "Bonjour", "Hola", "Moin", "Ciao", "Hallo", "Salut", "Namaste"}
)  # fmt: skip
_PRONOUNS = frozenset({"he", "she", "his", "her", "him"})
_TITLES = r"(?:Dr|Mr|Mrs|Ms|Miss|Prof|Sir|Dame)\.?"
_KIN = (
    r"(?:son|daughter|dad|father|mum|mom|mother|wife|husband|partner|brother|sister|"
    r"colleague|coworker|boss|manager|assistant|friend|flatmate|roommate|neighbour|neighbor|"
    r"cousin|uncle|aunt|teacher|nurse|coach|trainer|accountant|lawyer|doctor|vet|landlord|"
    r"landlady|agent|adjuster|broker|deputy|kid|child|grandson|granddaughter)"
)
_NAMED = re.compile(
    rf"\b(?:[Mm]y|[Hh]is|[Hh]er|[Oo]ur|[Tt]heir) (?:[a-z-]+ )?{_KIN},? (?P<kin>{_PERSON})"
    rf"|\b{_TITLES} (?P<titled>{_PERSON})"
)


def _name_people(sentence: str, scope: Scope) -> None:
    """Remember the people a sentence introduces ("my son Tobi Adeyemi", "Dr Siân
    Beddoe"), so "he", "she" and first names after them point at them."""
    for m in _NAMED.finditer(sentence):
        name = _strip_lead(m.group("kin") or m.group("titled") or "")
        if " " in name:
            scope.named(name)


_STREET = re.compile(
    r"\b(?:Road|Rd|Street|St|Avenue|Ave|Lane|Close|Drive|Way|Place|Square|Court|Gardens|"
    r"Terrace|Crescent|Row|Hill|Park|Mews|Walk)$"
)
_SLOT_WORDS = frozenset({"manager", "boss", "supervisor", "partner", "contact", "agent"})


def full_name(name: str, speaker: str, people: Sequence[str]) -> str:
    """A first name as the full name it stands for: the speaker's, else the latest of
    ``people`` (full names, most recent last) it begins; any other name as it is."""
    if " " not in name:
        if speaker.split()[:1] == [name]:
            return speaker
        for full in reversed(people):
            if full.split()[0] == name:
                return full
    return name


@dataclass
class Scope:
    """Who the words of one user line can point at: the speaker ("I"), their
    organisation ("we"), and the people and organisations named so far."""

    speaker: str
    organisation: Callable[[], str | None] = lambda: None
    people: list[str] = field(default_factory=list)
    """Full names seen in this conversation, most recent last."""
    organisations: list[str] = field(default_factory=list)
    employer: str | None = None
    """Where the speaker said they work, in this line or an earlier one."""

    def org(self) -> str | None:
        return self.employer or self.organisation()

    def person(self, name: str) -> str:
        """A first name as the full name it stands for, when one was seen."""
        return full_name(name, self.speaker, self.people)

    def named(self, name: str) -> None:
        if " " in name and name != self.speaker:
            if name in self.people:
                self.people.remove(name)
            self.people.append(name)

    def known_organisation(self, name: str) -> str:
        """A short name as the organisation it stands for ("Fjordline" for "Fjordline
        Analytics"), when one was named."""
        for full in reversed(self.organisations):
            if full != name and full.startswith(f"{name} "):
                return full
        return name

    def last_person(self) -> str | None:
        return self.people[-1] if self.people else None

    def last_organisation(self) -> str | None:
        return self.organisations[-1] if self.organisations else self.org()


def _strip_lead(name: str) -> str:
    words = name.split()
    while words and words[0] in _NOT_A_NAME:
        words = words[1:]
    return " ".join(words)


def _who(raw: str, scope: Scope) -> tuple[str, str] | None:
    """The subject a ``who`` group names, and its kind; None when it names nothing."""
    word = raw.strip()
    low = word.casefold()
    if low in ("i", "my", "me"):
        return scope.speaker, "person"
    if low in ("we", "our"):
        org = scope.org()
        return (org, "organization") if org else (scope.speaker, "person")
    if low in ("their", "there", "them", "they"):
        org = scope.last_organisation()
        return (org, "organization") if org else None
    if low == "your":
        org = scope.org()
        return (org, "organization") if org else (scope.speaker, "person")
    if low in _PRONOUNS or low == "who":
        last = scope.last_person()
        return (last, "person") if last else None
    if word.endswith("'s"):
        word = word[:-2]
    word = _strip_lead(word)
    if not word or word in _NOT_A_NAME:
        return None
    if word in scope.organisations or word == scope.organisation():
        return word, "organization"
    return scope.person(word), "person"


def _entities(text: str) -> dict[str, list[str]]:
    """The names spaCy's English pipeline finds in ``text``, by label (``PERSON``,
    ``GPE``, ``LOC``, ``ORG``, …); nothing without the pipeline."""
    found: dict[str, list[str]] = {}
    for label, name in _parsed(text)[1]:
        found.setdefault(label, []).append(name)
    return found


def _owner(m: re.Match[str], scope: Scope, relation: str) -> tuple[str, str] | None:
    """Whose position a slot statement names: "my manager" the speaker's, "our billing
    contact" the organisation's, "my contact at Brightloom" Brightloom's."""
    at = m.groupdict().get("at")
    if at:
        return scope.known_organisation(_strip_lead(at)), "organization"
    who = m.group("who").strip()
    low = who.casefold()
    if low == "my" and relation == "manager":
        return scope.speaker, "person"
    if low in ("my", "our", "your", "the"):
        org = scope.org()
        return (org, "organization") if org else (scope.speaker, "person")
    if low == "their":
        org = scope.last_organisation()
        return (org, "organization") if org else None
    name = _strip_lead(who[:-2] if who.endswith("'s") else who)
    if not name or name in _NOT_A_NAME:
        return None
    return scope.known_organisation(name), "organization"


def statements(
    text: str,
    speaker: str,
    organisation: Callable[[], str | None] = lambda: None,
    scope: Scope | None = None,
) -> list[Statement]:
    """The facts one user line states, ``speaker`` being the subject of its first
    person; ``organisation()`` names the speaker's organisation (for "we" statements);
    ``scope`` carries the people and organisations named in earlier lines."""
    scope = scope or Scope(speaker, organisation)
    out: list[Statement] = []
    text = _plain(text)
    found = _entities(text[:READ_CHARS])
    places = {*found.get("GPE", []), *found.get("LOC", []), *found.get("FAC", [])}
    orgs = set(found.get("ORG", []))
    for name in found.get("PERSON", []):
        name = _strip_lead(name)
        if " " in name and not any(ch.isdigit() for ch in name):
            scope.named(name)
    for name in found.get("ORG", []):
        name = _strip_lead(name)
        if " " in name and name not in scope.organisations and name != scope.org():
            scope.organisations.append(name)
    previous = ""
    for sentence in sentences(text):
        sentence = _statement_part(sentence)
        if _states_nothing(sentence):
            previous = sentence
            continue
        changed = bool(CHANGE.search(sentence))
        _name_people(sentence, scope)
        taken: list[tuple[int, int, str]] = []
        for pattern in PATTERNS:
            for m in pattern.regex.finditer(sentence):
                span = m.span("obj")
                if any(s < span[1] and span[0] < e and r == pattern.relation for s, e, r in taken):
                    continue
                if any(s < span[1] and span[0] < e and r != "role" != pattern.relation
                       for s, e, r in taken):  # fmt: skip
                    continue
                before = sentence[
                    max(0, m.start() - 12) : m.start() + 1 + (m.start("obj") - m.start())
                ]
                if NEGATED.search(before) and "no longer" not in before:
                    continue
                value = _clean(m.group("obj") + (m.groupdict().get("model") or ""))
                if value.casefold() in ("he", "she"):
                    value = scope.last_person() or ""
                elif value.casefold() in ("them", "there"):
                    value = scope.last_organisation() or ""
                elif value.casefold() == "us":
                    value = scope.org() or ""
                if not value or value.lower() in ("it", "them", "that", "this", "here"):
                    continue
                if pattern.relation in ("lives_in", "located_in") and value[:1].islower():
                    value = _known_place(value)  # "i live in lagos": Lagos, if a place
                    if not value:
                        continue
                kind = "person"
                if pattern.subject == "owner":
                    owned = _owner(m, scope, pattern.relation)
                    if owned is None:
                        continue
                    subject, kind = owned
                elif pattern.subject == "owner-we":
                    subject = scope.org() or speaker
                    kind = "organization" if subject != speaker else "person"
                elif pattern.subject == "org-named":
                    subject = _strip_lead(m.group("who"))
                    placed = (
                        value in places
                        or is_place(value)
                        or (
                            re.search(r"\b(?:based|located|headquartered|out of)\b", m.group(0))
                            and value not in orgs
                        )
                    )
                    if (
                        not subject
                        or subject == speaker
                        or subject in scope.people
                        or subject.split()[0] == speaker.split()[0]
                        or _STREET.search(subject)
                        or not placed
                    ):
                        continue  # fmt: skip
                    kind = "organization"
                elif pattern.subject == "we-place":
                    subject = scope.org() or ""
                    if not subject or not (value in places or is_place(value)):
                        continue
                    kind = "organization"
                elif pattern.subject == "named":
                    subject, kind = m.group("subj"), "organization"
                elif pattern.subject in ("who", "who-in"):
                    resolved = _who(m.group("who"), scope)
                    if resolved is None:
                        continue
                    subject, kind = resolved
                elif pattern.subject == "fragment":
                    named = [
                        n for n in re.findall(rf"{_PERSON}", sentence[: m.start()])
                        if " " in _strip_lead(n) and _strip_lead(n) != speaker
                    ]  # fmt: skip
                    if named:  # "Harbourline Fish, based in Brixham": not the speaker
                        continue
                    subject = speaker
                elif pattern.subject == "we" and not re.match(r"(?i)\s*I\b", sentence[m.start() :]):
                    lead = sentence[max(0, m.start() - 30) : m.start()]
                    if re.search(r"(?i)\bthey\b", lead) and scope.organisations:
                        subject, kind = scope.last_organisation() or speaker, "organization"
                    else:
                        subject = scope.org() or speaker
                        kind = "organization" if subject != speaker else "person"
                else:
                    subject = speaker
                if value == subject or value in _NOT_A_NAME:
                    continue
                relation = pattern.relation
                if relation == "role" and value.casefold() in _SLOT_WORDS:
                    continue  # "my manager, Siobhan Keane": a manager, not a job title
                if "transferred" in m.group(0) and value in orgs and value not in places:
                    continue  # "transferred to Elmstead General": an employer, not a home
                switch = _SWITCH.search(m.group(0))  # "replaced Zendesk with Freshdesk"
                if relation in ("uses", "owns") and (
                    (value in places and not switch)
                    or value in scope.people
                    or (value in found.get("PERSON", []) and not switch)
                    or value.split()[0] in _NOT_A_NAME
                ):
                    continue  # fmt: skip
                if pattern.subject == "who-in" and not (value in places or is_place(value)):
                    continue  # "I'm in meetings", "who's in Trados": not a place
                if relation == "lives_in" and kind == "organization":
                    if re.search(r"\b(?:live|lives|living)\b", m.group(0)):
                        subject, kind = speaker, "person"
                    else:
                        relation = "located_in"
                if (
                    relation == "located_in"
                    and pattern.subject in ("we", "owner")
                    and kind == "person"
                ):
                    continue
                replaced = replaced_value(sentence, text, value, relation)
                taken.append((*span, relation))
                if kind == "person":
                    scope.named(subject)
                elif subject not in scope.organisations and subject != scope.org():
                    scope.organisations.append(subject)
                if relation == "works_at":
                    scope.organisations.append(value)
                    if subject == speaker:
                        scope.employer = value
                out.append(
                    Statement(
                        subject=subject, relation=relation, object=value,
                        object_kind=RELATIONS[relation], evidence=sentence,
                        replaces=replaced, changed=changed, subject_kind=kind,
                    )
                )  # fmt: skip
                if relation == "located_in":
                    out.extend(_more_places(sentence[m.end("obj") :], out[-1]))
                if relation == "role" and kind == "person" and subject != speaker:
                    out.extend(
                        _employer(m.group(0), subject, sentence, scope, changed,
                                  m.groupdict().get("org"))
                    )  # fmt: skip
        out.extend(_contacts(sentence, scope, taken, changed, previous))
        previous = sentence
    return out


_CONTACTS = (
    ("email", re.compile(_EMAIL)),
    ("phone", re.compile(rf"(?<![\w/.-]){_PHONE}(?![\w/])")),
)
_CUE = re.compile(
    r"(?P<org>\b(?:[Oo]ur|[Tt]he) (?:shop|office|clinic|practice|surgery|studio|business|company|"
    r"store|restaurant|salon|reception|main|firm|agency|school|hotel)(?:'s)? (?:phone |telephone |"
    r"email |e-mail )?(?:number|line|address|email)\b)|"
    rf"(?P<me>\b(?:[Mm]y|[Mm]e|I|I'm|I've)\b)|(?P<them>\b(?:[Hh]er|[Hh]is|[Hh]im|[Ss]he|[Hh]e|[Ss]he's|[Hh]e's)\b)"
    rf"|(?P<name>{_PERSON})"
)


def _contacts(
    sentence: str,
    scope: Scope,
    taken: list[tuple[int, int, str]],
    changed: bool,
    previous: str = "",
) -> list[Statement]:
    """An email address or phone number no pattern claimed belongs to whoever the words
    before it point at: "my" the speaker, "her"/"his" the person named last, a name that
    person; a bare address on its own, whoever the sentence before pointed at."""
    out: list[Statement] = []
    for relation, pattern in _CONTACTS:
        for m in pattern.finditer(sentence):
            if any(s < m.end("obj") and m.start("obj") < e for s, e, _ in taken):
                continue
            if relation == "phone" and sum(ch.isdigit() for ch in m.group("obj")) < 7:
                continue
            before = sentence[: m.start("obj")]
            if NEGATED.search(before) and "no longer" not in before:
                continue
            owner: str | None = None
            for cue in _CUE.finditer(before):
                if cue.group("org"):  # "our shop number", "the surgery's number"
                    owner = scope.org() or owner
                elif cue.group("me"):
                    owner = scope.speaker
                elif cue.group("them"):
                    owner = scope.last_person() or owner
                else:
                    name = _strip_lead(cue.group("name"))
                    if name and name not in _NOT_A_NAME and name not in scope.organisations:
                        full = scope.person(name)
                        if " " in full:
                            owner = full
                            scope.named(full)
            if owner is None and not before.strip(" :-\u2013\u2014"):
                cues = list(_CUE.finditer(previous))
                owner = scope.speaker if cues and cues[-1].group("me") else scope.last_person()
            owner = owner or scope.speaker
            value = _clean(m.group("obj"))
            taken.append((m.start("obj"), m.end("obj"), relation))
            out.append(
                Statement(subject=owner, relation=relation, object=value,
                          object_kind=RELATIONS[relation], evidence=sentence, changed=changed)
            )  # fmt: skip
    return out


_NEXT_PLACE = re.compile(rf"^(?:,\s*and\s+|,\s*|\s+and\s+)(?P<obj>{_PWORD}(?: {_PWORD}){{0,2}})")


def _known_place(words: str) -> str:
    """The known place lowercase ``words`` begin with ("lagos now" -> "Lagos"), or ""."""
    split = words.split()
    for n in (2, 1):
        if len(split) >= n and is_place(" ".join(split[:n])):
            return " ".join(split[:n]).title()
    return ""


def _more_places(rest: str, first: Statement) -> list[Statement]:
    """ "warehouses in Lagos, Abuja and Port Harcourt": the places after the first."""
    out: list[Statement] = []
    while m := _NEXT_PLACE.match(rest):
        out.append(Statement(subject=first.subject, relation=first.relation,
                             object=m.group("obj"), object_kind=first.object_kind,
                             evidence=first.evidence, changed=first.changed,
                             subject_kind=first.subject_kind))  # fmt: skip
        rest = rest[m.end() :]
    return out


def _employer(
    match: str,
    person: str,
    sentence: str,
    scope: Scope,
    changed: bool,
    named: str | None = None,
) -> list[Statement]:
    """ "Our IT lead Jonas Weber": Jonas works where the speaker works; "their brand
    manager": where the organisation named last works."""
    low = match.casefold()
    if named:
        org: str | None = scope.known_organisation(named)
    elif re.search(r"\bour\b", low) or re.search(r"\bhere\b", sentence.casefold()):
        org = scope.org()
    elif re.search(r"\btheir\b|\bthere\b", low + " " + sentence.casefold()):
        org = scope.last_organisation()
    else:
        org = None
    if not org or org == person:
        return []
    return [
        Statement(subject=person, relation="works_at", object=org, object_kind="organization",
                  evidence=sentence, changed=changed)
    ]  # fmt: skip
