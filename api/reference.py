"""The reference page's content, read from the OpenAPI document: one entry per operation,
with its parameters, body and answers, so the page and the document cannot disagree."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .auth import SCHEMES

METHODS = ("get", "post", "put", "delete")


@dataclass
class Parameter:
    name: str
    where: str
    required: bool
    type: str
    description: str


@dataclass
class Operation:
    method: str
    path: str
    summary: str
    description: str
    scope: str
    tag: str
    anchor: str
    parameters: list[Parameter] = field(default_factory=list)
    body: list[Parameter] = field(default_factory=list)
    answers: list[tuple[str, str]] = field(default_factory=list)


def _type(schema: dict[str, Any], components: dict[str, Any]) -> str:
    if "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[-1]
    if "anyOf" in schema:
        return " or ".join(_type(option, components) for option in schema["anyOf"])
    if schema.get("type") == "array":
        return f"list of {_type(schema.get('items', {}), components)}"
    if "enum" in schema:
        return " | ".join(str(value) for value in schema["enum"])
    return str(schema.get("format") or schema.get("type") or "any")


def _body(operation: dict[str, Any], components: dict[str, Any]) -> list[Parameter]:
    content = operation.get("requestBody", {}).get("content", {}).get("application/json", {})
    ref = content.get("schema", {}).get("$ref", "")
    schema = components.get(ref.rsplit("/", 1)[-1], {}) if ref else {}
    required = set(schema.get("required", []))
    return [
        Parameter(
            name, "body", name in required, _type(prop, components), prop.get("description", "")
        )
        for name, prop in schema.get("properties", {}).items()
    ]


def operations(document: dict[str, Any]) -> list[Operation]:
    components = document.get("components", {}).get("schemas", {})
    found = []
    for path, item in document.get("paths", {}).items():
        for method in METHODS:
            operation = item.get(method)
            if operation is None:
                continue
            security = operation.get("security") or []
            scope = ", ".join(
                sorted(
                    {str(SCHEMES[name]) for rule in security for name in rule if name in SCHEMES}
                )
            )
            found.append(
                Operation(
                    method=method.upper(),
                    path=path,
                    summary=operation.get("summary", ""),
                    description=operation.get("description", ""),
                    scope=scope,
                    tag=(operation.get("tags") or [""])[0],
                    anchor=operation.get("operationId", f"{method}-{path}"),
                    parameters=[
                        Parameter(
                            p["name"],
                            p["in"],
                            bool(p.get("required")),
                            _type(p.get("schema", {}), components),
                            p.get("description", "") or p.get("schema", {}).get("description", ""),
                        )
                        for p in operation.get("parameters", [])
                    ],
                    body=_body(operation, components),
                    answers=[
                        (code, answer.get("description", ""))
                        for code, answer in operation.get("responses", {}).items()
                    ],
                )
            )
    return found
