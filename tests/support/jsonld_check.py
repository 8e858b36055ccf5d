"""Expands ActivityStreams documents with a JSON-LD processor (PyLD) and
reports every place where a document says something its contexts do not
define: a term no context defines (the ActivityStreams context maps those
to blank-node properties, "_:term", rather than dropping them), a compact
IRI whose prefix none defines, a type or an id that is not a web address
or a URN, or a value whose coerced type it cannot be (a `published` that
is no date-time, a `totalItems` that is no count, a `whole` that is no
boolean).

Reads a JSON array of {"name": ..., "document": ...} on stdin; the contexts
come from the folder given as the first argument, never from the network.
Prints one line per finding and exits 1 when there is any, 0 when none.
"""

import json
import os
import re
import sys

from pyld import jsonld
from pyld.jsonld import JsonLdError

XSD = "http://www.w3.org/2001/XMLSchema#"
DATE_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")
# An IRI a term, type or id may expand to: a web address or a URN. A
# compact IRI whose prefix no context defines ("fedibird:quoteUri") stays
# as written and is caught here, as its "scheme" is none of these.
ABSOLUTE_IRI = re.compile(r"^(https?://|urn:)[^\s]*$")

# The contexts the documents name, by address (either scheme, with or
# without a trailing slash), and the file each is read from.
CONTEXTS = {
    "www.w3.org/ns/activitystreams": "activitystreams.jsonld",
    "w3id.org/security/v1": "security-v1.jsonld",
    "schema.org": "schema-org.jsonld",
}


def loader_for(folder):
    def load(url, options=None):
        key = re.sub(r"^https?://", "", url).rstrip("/")
        name = CONTEXTS.get(key)
        if name is None:
            raise JsonLdError(
                "no local copy of the context " + url,
                "jsonld.LoadDocumentError",
                code="loading document failed",
            )
        with open(os.path.join(folder, name), encoding="utf-8") as f:
            document = json.load(f)
        return {
            "contentType": "application/ld+json",
            "contextUrl": None,
            "documentUrl": url,
            "document": document,
        }

    return load


def check_value(value, path, out):
    kind = value.get("@type")
    literal = value.get("@value")
    if kind is None:
        return
    if kind == XSD + "dateTime" and not (
        isinstance(literal, str) and DATE_TIME.match(literal)
    ):
        out.append(f"{path}: {literal!r} is typed xsd:dateTime but is no date-time")
    if kind == XSD + "nonNegativeInteger" and not (
        isinstance(literal, int) and not isinstance(literal, bool) and literal >= 0
    ):
        out.append(f"{path}: {literal!r} is typed xsd:nonNegativeInteger but is no count")
    if kind == XSD + "boolean" and not isinstance(literal, bool):
        out.append(f"{path}: {literal!r} is typed xsd:boolean but is no boolean")
    if kind == XSD + "float" and not (
        isinstance(literal, (int, float)) and not isinstance(literal, bool)
    ):
        out.append(f"{path}: {literal!r} is typed xsd:float but is no number")


def check_node(node, path, out):
    if isinstance(node, list):
        for i, item in enumerate(node):
            check_node(item, f"{path}[{i}]", out)
        return
    if not isinstance(node, dict):
        return
    if "@value" in node:
        check_value(node, path, out)
        return
    for key, value in node.items():
        here = f"{path}/{key}"
        if key == "@id":
            if not ABSOLUTE_IRI.match(value) or value.startswith("_:"):
                out.append(f"{here}: {value!r} is not an absolute IRI")
        elif key == "@type":
            for kind in value if isinstance(value, list) else [value]:
                if not ABSOLUTE_IRI.match(kind) or kind.startswith("_:"):
                    out.append(f"{here}: the type {kind!r} is defined by no context")
        elif key.startswith("@"):
            check_node(value, here, out)
        elif key.startswith("_:") or not ABSOLUTE_IRI.match(key):
            term = key[2:] if key.startswith("_:") else key
            out.append(f"{path}: the term {term!r} is defined by no context")
            check_node(value, here, out)
        else:
            check_node(value, here, out)


def main():
    folder = sys.argv[1]
    documents = json.load(sys.stdin)
    options = {"documentLoader": loader_for(folder)}
    findings = []
    for entry in documents:
        name = entry["name"]
        try:
            expanded = jsonld.expand(entry["document"], options)
        except JsonLdError as e:
            findings.append(f"{name}: does not expand: {e}")
            continue
        if not expanded:
            findings.append(f"{name}: expands to nothing")
        out = []
        check_node(expanded, "", out)
        findings.extend(f"{name}: {line}" for line in out)
    for line in findings:
        print(line)
    sys.exit(1 if findings else 0)


if __name__ == "__main__":
    main()
