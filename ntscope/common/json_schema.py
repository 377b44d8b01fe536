"""The part of JSON Schema (draft 2020-12) that ntscope's own schemas use, to check an input
document at run time against the fields it reads (sql/raw_views.py HOST_JSON_READ, a part of
capture/schemas/host.schema.json that a test holds equal to it): type, enum, const,
properties, items, minimum, maximum. Fields a document leaves out are not required here
(older captures lack some); a field present must match."""

TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def type_ok(value, name):
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, TYPES[name])


def problems(doc, schema, where="$"):
    """[(field path, value, what it must be)] of DOC against SCHEMA (the first per field)."""
    out = []
    types = schema.get("type")
    if types is not None:
        names = types if isinstance(types, list) else [types]
        if not any(type_ok(doc, t) for t in names):
            return [(where, doc, f"must be {' or '.join(names)}")]
    if "const" in schema and doc != schema["const"]:
        return [(where, doc, f"must be {schema['const']!r}")]
    if "enum" in schema and doc not in schema["enum"]:
        return [(where, doc, f"must be one of {', '.join(repr(e) for e in schema['enum'])}")]
    if type_ok(doc, "number"):
        if "minimum" in schema and doc < schema["minimum"]:
            return [(where, doc, f"must be at least {schema['minimum']}")]
        if "maximum" in schema and doc > schema["maximum"]:
            return [(where, doc, f"must be at most {schema['maximum']:,}")]
    if isinstance(doc, dict):
        for key, sub in (schema.get("properties") or {}).items():
            if key in doc:
                out += problems(doc[key], sub, f"{where}.{key}")
    if isinstance(doc, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(doc):
            out += problems(item, schema["items"], f"{where}[{i}]")
    return out
