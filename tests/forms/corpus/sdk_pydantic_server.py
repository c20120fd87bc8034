"""The throwaway MCP server (official SDK, mcp 2.3.0) whose tools/list gave sdk_pydantic.json."""
from __future__ import annotations

import datetime as dt
import enum
import uuid
from typing import Annotated, Literal

from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel, Field

app = MCPServer("forms-corpus")


class Colour(str, enum.Enum):
    red = "red"
    green = "green"
    blue = "blue"


class Level(enum.IntEnum):
    low = 1
    mid = 2
    high = 3


class Address(BaseModel):
    street: str
    city: str = Field(description="City name", min_length=1)
    postcode: str | None = None
    country: str = "NL"


class Person(BaseModel):
    name: str = Field(title="Full name", max_length=100)
    age: int = Field(ge=0, le=150)
    email: str | None = Field(default=None, json_schema_extra={"format": "email"})
    address: Address
    tags: list[str] = []
    favourite: Colour = Colour.blue


class Cat(BaseModel):
    kind: Literal["cat"]
    lives: int = 9


class Dog(BaseModel):
    kind: Literal["dog"]
    good_boy: bool = True
    breed: str | None = None


class TreeNode(BaseModel):
    label: str
    children: list[TreeNode] = []


class Category(BaseModel):
    name: str
    parent: Category | None = None


@app.tool()
def register_person(person: Person, notify: bool = False) -> str:
    """Register a person with a nested address."""
    return person.name


@app.tool()
def adopt_pet(pet: Annotated[Cat | Dog, Field(discriminator="kind")], owner: str) -> str:
    """Adopt a pet (discriminated union)."""
    return owner


@app.tool()
def paint(colour: Colour, level: Level = Level.mid, shade: Literal["light", "dark", "neutral"] = "neutral",
          opacity: float = Field(default=1.0, ge=0, le=1)) -> str:
    """Enums and literals."""
    return colour.value


@app.tool()
def schedule(when: dt.datetime, day: dt.date, at: dt.time | None = None, request_id: uuid.UUID | None = None,
             every: dt.timedelta | None = None) -> str:
    """Dates, times and UUIDs."""
    return str(when)


@app.tool()
def set_labels(labels: dict[str, str], weights: dict[str, float] | None = None,
               point: tuple[int, int] = (0, 0), triple: tuple[str, int, bool] | None = None) -> str:
    """Maps and tuples."""
    return "ok"


@app.tool()
def build_tree(root: TreeNode, category: Category | None = None) -> str:
    """Recursive models."""
    return root.label


@app.tool()
def search(query: str, limit: Annotated[int, Field(ge=1, le=100)] = 10, offset: int = 0,
           exact: bool | None = None, fields: list[Literal["title", "body", "author"]] | None = None,
           sort: Literal["asc", "desc"] | None = None, score_min: float | None = None,
           ids: set[int] | None = None) -> list[str]:
    """Optional scalars and lists."""
    return []


@app.tool()
def mixed(value: int | str, maybe_list: list[int] | int | None = None,
          raw: dict | None = None, anything=None) -> str:
    """Unions of scalars and untyped parameters."""
    return "x"


if __name__ == "__main__":
    app.run()
