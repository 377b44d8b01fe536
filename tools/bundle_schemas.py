"""Bundles the schemas a schema refers to into it, so that a plain validator (no registry)
resolves every $ref: compare.schema.json's `interference` refers to
urn:ntscope:schema:interference, embedded under its $defs with that $id (JSON Schema 2020-12
embedded resources). reports/tests/test_schemas.py fails when the bundle is stale.

    python tools/bundle_schemas.py          rewrite the bundles
    python tools/bundle_schemas.py --check  exit 1 when a bundle differs from its source"""
import json
import os
import sys

SCHEMAS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "reports", "schemas")
# schema file -> the schema files embedded in it ($defs key, file)
BUNDLES = {"compare.schema.json": [("interference_document", "interference.schema.json")]}


def read(name):
    with open(os.path.join(SCHEMAS, name)) as f:
        return json.load(f)


def text(doc):
    return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"


def bundled(name):
    doc = read(name)
    for key, embedded in BUNDLES[name]:
        doc.setdefault("$defs", {})[key] = read(embedded)
    return text(doc)


def main(argv):
    stale = []
    for name in BUNDLES:
        want = bundled(name)
        path = os.path.join(SCHEMAS, name)
        with open(path) as f:
            have = f.read()
        if have != want:
            stale.append(name)
            if "--check" not in argv:
                with open(path + ".tmp", "w") as f:
                    f.write(want)
                os.replace(path + ".tmp", path)
    if "--check" in argv and stale:
        print(f"stale bundles: {', '.join(stale)}; fix: python tools/bundle_schemas.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
