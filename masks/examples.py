"""Example grammars that come with tokenfsm, for the demo, the tests and the notebooks.

The demo's grammar is a function call: ``get_weather`` with a free-text location (which may not
smuggle in the chat template's markers), a unit from an enum and a number of days. It is kept as
data (``data/get_weather.json``: the schema and its excluded substrings) so that the command, the
benchmarks and the notebooks all read the same one.

Example
-------
>>> from tokenfsm.masks.examples import get_weather
>>> example = get_weather()
>>> example.schema["properties"]["name"], example.excludes
({'const': 'get_weather'}, ('<|im_end|>', '<tool_call>'))
>>> from tokenfsm.schema import compile_json_schema
>>> compile_json_schema(example.schema, excludes=example.excludes).accepts(
...     '{"name":"get_weather","arguments":{"location":"Paris","unit":"celsius","days":3}}')
True

The markers are Qwen's chat template's (``<|im_end|>`` ends a turn, ``<tool_call>`` opens a call).
"""

from __future__ import annotations

import importlib.resources
import json
from dataclasses import dataclass

__all__ = ["ExampleSchema", "get_weather"]


@dataclass(frozen=True)
class ExampleSchema:
    """A JSON Schema with the substrings its strings must not contain.

    Attributes
    ----------
    name : str
    description : str
    schema : dict
        A fresh copy for each caller (changing it changes nothing else).
    excludes : tuple of str
    """

    name: str
    description: str
    schema: dict
    excludes: tuple


def _read(name: str) -> dict:
    text = importlib.resources.files(__package__).joinpath("data", f"{name}.json").read_text("utf-8")
    return json.loads(text)


def get_weather() -> ExampleSchema:
    """The demo's ``get_weather`` function call (see the module docstring).

    Returns
    -------
    ExampleSchema
    """
    doc = _read("get_weather")
    return ExampleSchema("get_weather call", doc["description"], doc["schema"],
                         tuple(doc["excludes"]))
