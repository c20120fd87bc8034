"""Hand-written schemas, one per feature the issue lists (the corpus holds the real ones)."""

FEATURES = {
    "strings": {
        "type": "object",
        "properties": {
            "short": {"type": "string", "minLength": 2, "maxLength": 10, "pattern": "^[a-z]+$"},
            "long": {"type": "string", "maxLength": 5000, "description": "multi-line"},
            "notes": {"type": "string", "contentMediaType": "text/markdown"},
            "secret": {"type": "string", "writeOnly": True},
            "pin": {"type": "string", "format": "password"},
            "day": {"type": "string", "format": "date"},
            "at": {"type": "string", "format": "date-time"},
            "clock": {"type": "string", "format": "time"},
            "mail": {"type": "string", "format": "email"},
            "link": {"type": "string", "format": "uri"},
            "id": {"type": "string", "format": "uuid"},
            "v4": {"type": "string", "format": "ipv4"},
            "v6": {"type": "string", "format": "ipv6"},
            "host": {"type": "string", "format": "hostname"},
            "hinted": {"type": "string", "x-hint": "textarea"},
        },
        "required": ["short"],
    },
    "numbers": {
        "type": "object",
        "properties": {
            "n": {"type": "number", "minimum": -10.5, "maximum": 1e6},
            "i": {"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 100, "multipleOf": 5},
            "big": {"type": "integer"},
            "ratio": {"type": "number", "multipleOf": 0.25},
            "flag": {"type": "boolean"},
            "on": {"type": "boolean", "default": True},
        },
        "required": ["flag"],
    },
    "enums": {
        "type": "object",
        "properties": {
            "mixed": {"enum": ["a", 1, 1.5, True, None, {"k": [1]}, [2, "x"]]},
            "answer": {"const": 42},
            "titled": {"oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}]},
            "legacy": {"type": "string", "enum": ["x", "y"], "enumNames": ["Ex", "Why"]},
            "many": {"type": "array", "items": {"enum": ["r", "g", "b"]}, "uniqueItems": True},
            "bools": {"enum": [True, 1, False, 0]},
        },
    },
    "nullables": {
        "type": "object",
        "properties": {
            "a": {"type": ["string", "null"]},
            "b": {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}], "default": None},
            "c": {"type": ["integer", "null"], "enum": [1, 2, None]},
            "d": {"anyOf": [{"type": "object", "properties": {"x": {"type": "string"}}}, {"type": "null"}]},
            "e": {"type": ["string", "integer"]},
        },
        "required": ["a"],
    },
    "nested": {
        "type": "object",
        "properties": {
            "options": {"type": "object", "properties": {
                "units": {"type": "string", "enum": ["metric", "imperial"]},
                "deep": {"type": "object", "properties": {"deeper": {"type": "object", "properties": {
                    "deepest": {"type": "object", "properties": {"leaf": {"type": "integer"}}}}}}}},
                "required": ["units"]},
            "tags": {"type": "array", "items": {"type": "string"}, "minItems": 0, "maxItems": 5},
            "people": {"type": "array", "items": {"type": "object", "properties": {
                "name": {"type": "string"}, "age": {"type": "integer"}}, "required": ["name"]}},
            "matrix": {"type": "array", "items": {"type": "array", "items": {"type": "number"}}},
            "pair": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}],
                     "items": False, "minItems": 2},
        },
    },
    "tuple_draft7": {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {
            "point": {"type": "array", "items": [{"type": "number"}, {"type": "number"}],
                      "additionalItems": {"type": "string"}},
        },
        "definitions": {"name": {"type": "string", "minLength": 1}},
        "required": ["point"],
    },
    "maps": {
        "type": "object",
        "properties": {
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "scores": {"type": "object", "patternProperties": {"^s_": {"type": "integer"},
                                                               "^f_": {"type": "number"}},
                       "additionalProperties": False},
            "free": {"type": "object"},
            "anything": {},
        },
    },
    "refs": {
        "type": "object",
        "$defs": {
            "node": {"type": "object", "properties": {"value": {"type": "integer"},
                                                      "next": {"$ref": "#/$defs/node"}}},
            "colour": {"type": "string", "enum": ["red", "green"]},
        },
        "definitions": {"legacy": {"type": "boolean"}},
        "properties": {
            "list": {"$ref": "#/$defs/node"},
            "colour": {"$ref": "#/$defs/colour", "default": "green"},
            "old": {"$ref": "#/definitions/legacy"},
        },
    },
    "choices": {
        "type": "object",
        "properties": {
            "shape": {"oneOf": [
                {"type": "object", "properties": {"kind": {"const": "circle"}, "r": {"type": "number"}},
                 "required": ["kind", "r"]},
                {"type": "object", "properties": {"kind": {"const": "square"}, "side": {"type": "number"}},
                 "required": ["kind", "side"]}]},
            "target": {"anyOf": [{"type": "string", "format": "uri"}, {"type": "integer"},
                                 {"type": "array", "items": {"type": "string"}}]},
            "merged": {"allOf": [{"type": "object", "properties": {"a": {"type": "string"}}},
                                 {"properties": {"b": {"type": "integer"}}, "required": ["b"]}]},
            "cond": {"type": "object", "properties": {"country": {"type": "string", "enum": ["US", "NL"]},
                                                      "zip": {"type": "string"}},
                     "if": {"properties": {"country": {"const": "US"}}},
                     "then": {"properties": {"zip": {"pattern": "^[0-9]{5}$"}}}},
        },
    },
    "annotations": {
        "type": "object",
        "properties": {
            "title_only": {"type": "string", "title": "A nice title", "description": "Help text",
                           "examples": ["for example"]},
            "old": {"type": "string", "deprecated": True},
            "count": {"type": "integer", "default": 3},
        },
        "required": ["title_only"],
    },
}
