"""Fit the statement reader (:mod:`streams.memory.learned`) on the train split only.

Reads the labelled conversations of ``tests/eval/memory/`` (``train.json`` to
``train10.json``, :data:`TRAIN_FILES`; ``test.json`` is never opened here), builds one
example per candidate value of every user line (its relation, or ``none``) and one per
(value, possible subject) pair, fits two logistic models (scikit-learn), and chooses the
gate by five-fold cross-validation over conversations: the gate with the best F1 among
those whose held-out precision reaches ``MIN_PRECISION``. Writes
``streams/memory/learned_model.json``.

    python -m bench.eval.memory_fit [--out PATH]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from datetime import date
from pathlib import Path
from typing import Any

from bench.eval.memory import SETS, _same, _subject_ok
from projections.index.ranking import QUESTION_RELATIONS_FILE
from streams.memory.english import english_doc
from streams.memory.learned import (
    MODEL_PATH,
    Context,
    Model,
    candidates,
    read,
    relation_features,
    subject_candidates,
    subject_features,
)
from streams.memory.statements import introduced_name

TRAIN_FILES = tuple(f"train{n}.json" for n in ("", 2, 3, 4, 5, 6, 7, 8, 9, 10))
GATES = (0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7)
MIN_PRECISION = 0.85
MIN_COUNT = 2
"""A feature seen in fewer training examples than this gets no weight."""
FOLDS = 5
RELATION_C = 1.0
SUBJECT_C = 1.0
QUESTION_C = 16.0
"""Regularisation of the question model (1, 4 and 16 were compared by cross-validation
on the train questions: 0.62, 0.72, 0.76)."""


def conversations() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for name in TRAIN_FILES:
        path = SETS / name
        if path.exists():
            out += json.loads(path.read_text())["conversations"]
    return out


def _walk(
    conv: dict[str, Any], docs: Sequence[Any], each: Callable[[int, Any, Context], None]
) -> None:
    """``each(turn, doc, ctx)`` for every user line, the context carried as at run time."""
    speaker = (conv.get("metadata") or {}).get("user_name")
    ctx = Context(speaker or "user")
    for n, turn in enumerate(conv["turns"]):
        if not speaker:
            named = introduced_name(turn["user"])
            if named:
                ctx.speaker = speaker = named
        each(n, docs[n], ctx)
        ctx.see(docs[n])


def examples(
    conv: dict[str, Any], docs: Sequence[Any]
) -> tuple[list[tuple[dict[str, float], str]], list[tuple[dict[str, float], int]]]:
    """(relation examples, subject examples) of one labelled conversation."""
    relations: list[tuple[dict[str, float], str]] = []
    subjects: list[tuple[dict[str, float], int]] = []

    def each(n: int, doc: Any, ctx: Context) -> None:
        facts = [f for f in conv["facts"] if f["turn"] == n]
        for span, sources in candidates(doc):
            stated = [f for f in facts if _same(f["object"], span.text)]
            label = stated[0]["relation"] if stated else "none"
            relations.append((relation_features(span, sources, doc), label))
            for fact in stated:
                for subject in subject_candidates(span, doc, ctx):
                    right = _subject_ok(fact["subject"], subject[1], conv)
                    subjects.append(
                        (subject_features(span, doc, fact["relation"], subject), int(right))
                    )
        for fact in facts:
            if fact["relation"] == "works_at" and _subject_ok(fact["subject"], ctx.speaker, conv):
                ctx.organisation = ctx.organisation or fact["object"]

    _walk(conv, docs, each)
    return relations, subjects


def fit(
    relations: Sequence[tuple[dict[str, float], str]],
    subjects: Sequence[tuple[dict[str, float], int]],
    gate: float = 0.5,
    fitted_on: str = "",
) -> Model:
    from sklearn.feature_extraction import DictVectorizer
    from sklearn.linear_model import LogisticRegression

    def vectoriser(rows: Sequence[dict[str, float]]) -> Any:
        counts: dict[str, int] = {}
        for row in rows:
            for name in row:
                counts[name] = counts.get(name, 0) + 1
        kept = [{k: v for k, v in row.items() if counts[k] >= MIN_COUNT} for row in rows]
        vec = DictVectorizer()
        return vec, vec.fit_transform(kept)

    vec, x = vectoriser([r for r, _ in relations])
    rel = LogisticRegression(C=RELATION_C, max_iter=3000).fit(x, [y for _, y in relations])
    names = vec.get_feature_names_out()
    relation_weights = {
        str(name): [round(float(w), 4) for w in rel.coef_[:, i]] for i, name in enumerate(names)
    }
    svec, sx = vectoriser([r for r, _ in subjects])
    subj = LogisticRegression(C=SUBJECT_C, max_iter=3000).fit(sx, [y for _, y in subjects])
    subject_weights = {
        str(name): round(float(subj.coef_[0, i]), 4)
        for i, name in enumerate(svec.get_feature_names_out())
    }
    return Model(
        classes=tuple(str(c) for c in rel.classes_),
        relation_weights=relation_weights,
        relation_bias=[round(float(b), 4) for b in rel.intercept_],
        subject_weights=subject_weights,
        subject_bias=round(float(subj.intercept_[0]), 4),
        gate=gate,
        fitted_on=fitted_on,
    )


def _score(
    conv: dict[str, Any], docs: Sequence[Any], model: Model, gate: float
) -> tuple[int, int, int]:
    """(labelled facts found, statements read, statements right) for one conversation."""
    read_out: list[tuple[str, str, str]] = []

    def each(n: int, doc: Any, ctx: Context) -> None:
        read_out.extend((r.subject, r.relation, r.object) for r in read(doc, ctx, model, gate))

    _walk(conv, docs, each)

    def matches(fact: dict[str, Any], s: str, r: str, o: str) -> bool:
        return (
            r == fact["relation"]
            and _same(fact["object"], o)
            and _subject_ok(fact["subject"], s, conv)
        )

    found = sum(any(matches(f, *x) for x in read_out) for f in conv["facts"])
    right = sum(any(matches(f, *x) for f in conv["facts"]) for x in read_out)
    return found, len(read_out), right


def cross_validate(
    convs: Sequence[dict[str, Any]], docs: Sequence[Sequence[Any]], ex: Sequence[Any]
) -> dict[float, dict[str, float]]:
    """Per gate: recall, precision and F1 of the reader alone, each conversation read
    by a model fitted without it (five folds)."""
    totals = {g: [0, 0, 0] for g in GATES}
    labelled = sum(len(c["facts"]) for c in convs)
    for fold in range(FOLDS):
        train = [i for i in range(len(convs)) if i % FOLDS != fold]
        model = fit([r for i in train for r in ex[i][0]], [s for i in train for s in ex[i][1]])
        for i in range(fold, len(convs), FOLDS):
            for gate in GATES:
                found, stated, right = _score(convs[i], docs[i], model, gate)
                totals[gate][0] += found
                totals[gate][1] += stated
                totals[gate][2] += right
    out = {}
    for gate, (found, stated, right) in totals.items():
        recall = found / labelled
        precision = right / stated if stated else 0.0
        f1 = 2 * recall * precision / (recall + precision) if recall + precision else 0.0
        out[gate] = {
            "recall": round(recall, 3),
            "precision": round(precision, 3),
            "f1": round(f1, 3),
        }
    return out


def fit_questions(convs: Sequence[dict[str, Any]], out: Path) -> None:
    """Which relation a question asks for, from its MiniLM embedding: every train
    question whose answer is a labelled fact, a multinomial logistic model; its accuracy
    by five-fold cross-validation over conversations is printed."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GroupKFold, cross_val_predict

    from streams.embedder.model import SentenceTransformerEmbedder

    asked, labels, groups = [], [], []
    for n, conv in enumerate(convs):
        for q in conv["questions"]:
            relation = next(
                (f["relation"] for f in conv["facts"] if f["object"] == q["answer"]), None
            )
            if relation:
                asked.append(q["q"])
                labels.append(relation)
                groups.append(n)
    model = SentenceTransformerEmbedder("sentence-transformers/all-MiniLM-L6-v2")
    x, y = np.array(model.encode(asked)), np.array(labels)
    fitted = LogisticRegression(C=QUESTION_C, max_iter=3000)
    held_out = cross_val_predict(fitted, x, y, groups=groups, cv=GroupKFold(FOLDS))
    print(f"question -> relation: {len(y)} train questions, cross-validated accuracy "
          f"{(held_out == y).mean():.3f}")  # fmt: skip
    fitted.fit(x, y)
    data = {
        "fitted_on": f"{len(y)} questions of {', '.join(TRAIN_FILES)} on {date.today()}",
        "classes": [str(c) for c in fitted.classes_],
        "weights": [[round(float(w), 4) for w in row] for row in fitted.coef_],
        "bias": [round(float(b), 4) for b in fitted.intercept_],
    }
    out.write_text(json.dumps(data, separators=(",", ":")) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.eval.memory_fit")
    parser.add_argument("--out", type=Path, default=MODEL_PATH)
    parser.add_argument("--questions-out", type=Path, default=QUESTION_RELATIONS_FILE)
    args = parser.parse_args()
    convs = conversations()
    fit_questions(convs, args.questions_out)
    docs = [[english_doc(t["user"]) for t in c["turns"]] for c in convs]
    ex = [examples(c, d) for c, d in zip(convs, docs, strict=True)]
    table = cross_validate(convs, docs, ex)
    print(f"reader alone, {FOLDS}-fold cross-validation over {len(convs)} train conversations")
    print(f"{'gate':>6}{'recall':>9}{'precision':>11}{'f1':>7}")
    for gate, row in table.items():
        print(f"{gate:>6}{row['recall']:>9}{row['precision']:>11}{row['f1']:>7}")
    eligible = [g for g, row in table.items() if row["precision"] >= MIN_PRECISION] or [max(GATES)]
    gate = max(eligible, key=lambda g: table[g]["f1"])
    fitted_on = (
        f"{len(convs)} conversations of {', '.join(TRAIN_FILES)} on {date.today()}; gate "
        f"{gate} by {FOLDS}-fold cross-validation (recall {table[gate]['recall']}, "
        f"precision {table[gate]['precision']})"
    )
    model = fit([r for e in ex for r in e[0]], [s for e in ex for s in e[1]], gate, fitted_on)
    args.out.write_text(json.dumps(model.to_json(), separators=(",", ":"), sort_keys=True) + "\n")
    print(f"gate {gate}; wrote {args.out} ({args.out.stat().st_size // 1024} KB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
