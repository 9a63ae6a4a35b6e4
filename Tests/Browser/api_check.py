#!/usr/bin/env python3
"""Checks refreshd's dashboard API against its OpenAPI document, then fuzzes it.

Run by RefreshdWebTests (OpenAPITests) against a real `refreshd run --http` with the Python of
the venv Scripts/bootstrap makes (.build/python-tools: jsonschema, schemathesis, pinned). Prints
one JSON object with what it found; the Swift test judges it.

1. The document: OpenAPI 3.1, every path under /api/ (and /healthz) described.
2. Real responses: each GET target given, and the actions (without a token, with a wrong one,
   with the token), validated with jsonschema against the schema the document gives for that
   path, method and status. A status the document does not list is an error.
3. A bounded schemathesis fuzz (SECONDS of wall time at most, a fixed seed) of every operation
   but the endless event stream and the simulation, with the token (so actions run), checking that no answer is a
   5xx other than the documented 503s and that every answer conforms to the document.

  api_check.py BASE TOKEN SCHEMATHESIS SECONDS TARGET...
  (a TARGET is `GET /path` or `POST /path` or `POST! /path` for a POST with the token)
"""
import json
import shutil
import subprocess
import tempfile
import sys
import time
import urllib.error
import urllib.request


def request(base, method, path, token=None, wrong=False):
    req = urllib.request.Request(base + path, method=method, data=b"" if method == "POST" else None)
    if token:
        req.add_header("Authorization", "Bearer " + ("x" * 24 if wrong else token))
    try:
        with urllib.request.urlopen(req, timeout=30) as response:
            return response.status, response.headers.get("Content-Type", ""), response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Content-Type", ""), error.read()


def resolve(document, item):
    """An object of the document, following a local `$ref` (the shared responses and parameters
    under components)."""
    while isinstance(item, dict) and "$ref" in item:
        node = document
        for part in item["$ref"].lstrip("#/").split("/"):
            node = node[part]
        item = node
    return item


def template_of(document, path):
    """The document's path template matching a concrete path (without its query)."""
    concrete = path.split("?", 1)[0].strip("/").split("/")
    for template in document["paths"]:
        parts = template.strip("/").split("/")
        if len(parts) == len(concrete) and all(p.startswith("{") or p == c for p, c in zip(parts, concrete)):
            return template
    return None


def main():
    base, token, schemathesis, seconds = sys.argv[1:5]
    targets = sys.argv[5:]
    result = {"checked": [], "errors": [], "fuzz": {}}
    try:
        import jsonschema
        from jsonschema import Draft202012Validator
    except ImportError as error:
        print(json.dumps({"missing": "jsonschema: %s (run Scripts/bootstrap)" % error}))
        return 3

    status, ctype, body = request(base, "GET", "/api/openapi.json")
    document = json.loads(body)
    result["openapi"] = document.get("openapi")
    try:
        from openapi_spec_validator import validate
        validate(document)
        result["documentValid"] = True
    except ImportError:
        # schemathesis parses the document itself below; the schemas are checked as JSON Schema here.
        for name, schema in document["components"]["schemas"].items():
            Draft202012Validator.check_schema(schema)
        result["documentValid"] = True
    except Exception as error:
        result["documentValid"] = False
        result["errors"].append("the document is not valid OpenAPI: %s" % error)

    root = {"components": document["components"]}
    for target in targets:
        method, path = target.split(" ", 1)
        with_token = method.endswith("!")
        method = method.rstrip("!")
        wrong = method == "POST?"
        status, ctype, body = request(base, method.rstrip("?"), path, token if (with_token or wrong) else None, wrong)
        method = method.rstrip("?")
        entry = {"target": target, "status": status}
        template = template_of(document, path)
        operation = document["paths"].get(template, {}).get(method.lower()) if template else None
        if operation is None:
            result["errors"].append("%s %s: not in the document" % (method, path))
            result["checked"].append(entry)
            continue
        response = resolve(document, operation["responses"].get(str(status)))
        if response is None:
            result["errors"].append("%s %s answered %d, which the document does not list (%s)" %
                                    (method, path, status, ", ".join(operation["responses"])))
        else:
            content = response.get("content", {})
            media = ctype.split(";")[0].strip()
            if media not in content:
                result["errors"].append("%s %s answered %s, the document says %s" % (method, path, media, list(content)))
            elif media == "application/json":
                schema = dict(root, **content[media]["schema"])
                try:
                    value = json.loads(body)
                    errors = sorted(Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER).iter_errors(value),
                                    key=lambda e: list(e.absolute_path))
                    for error in errors[:5]:
                        result["errors"].append("%s %s (%d): at %s: %s" % (method, path, status,
                                                "/".join(str(p) for p in error.absolute_path), error.message[:300]))
                    entry["valid"] = not errors
                except ValueError as error:
                    result["errors"].append("%s %s: not JSON: %s" % (method, path, error))
        result["checked"].append(entry)

    # The fuzz: bounded in time and examples, seeded. Left out: the event stream (it never ends)
    # and /api/simulate (each request may take its 10 s bound, which would eat the whole budget
    # in two examples; its real responses are checked above, its bounds by SimulatePageTests).
    started = time.time()
    command = [schemathesis, "run", base + "/api/openapi.json", "--url", base,
               "--max-examples", "12", "--max-time", seconds, "--seed", "20261126", "--workers", "2",
               "--request-timeout", "15", "--exclude-path", "/api/events", "--exclude-path", "/api/simulate",
               "--checks", "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance",
               "--suppress-health-check", "all", "--generation-database", "none",
               "-H", "Authorization: Bearer " + token]
    # Its cache (.schemathesis/) goes to a directory of its own, removed after.
    scratch = tempfile.mkdtemp(prefix="refreshd-fuzz-")
    try:
        fuzz = subprocess.run(command, capture_output=True, text=True, timeout=int(seconds) + 60, cwd=scratch)
        output = fuzz.stdout + fuzz.stderr
        result["fuzz"] = {"exit": fuzz.returncode, "seconds": round(time.time() - started, 2),
                          "started": started, "ended": time.time(), "tail": output[-4000:]}
    except subprocess.TimeoutExpired as error:
        result["fuzz"] = {"exit": -1, "seconds": round(time.time() - started, 2), "started": started, "ended": time.time(),
                          "tail": ("%s" % (error.stdout or ""))[-2000:]}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
