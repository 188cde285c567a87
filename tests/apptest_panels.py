"""What the stage panels of an AppTest run were sent: the payload of each panel (decoded),
and the page state (followed Python line, presentation mode). The panels draw in the browser;
these read what they would draw."""
import json

from app.components.stage_panel import payload


def panels(at) -> dict[str, dict]:
    """stage name -> the panel's payload (app/components/stage_panel/payload.py)."""
    out = {}
    for el in at.get("bidi_component"):
        if el.proto.component_name == "tlens_stage_panel":
            data = payload.decode(el.proto.bytes)
            out[data["stage"]] = data
    return out


def page_state(at) -> dict:
    states = [json.loads(el.proto.json) for el in at.get("bidi_component")
              if el.proto.component_name == "tlens_page_state"]
    assert len(states) == 1, states
    return states[0]


def text(at) -> str:
    """Every panel's lines, one text."""
    return "\n".join("\n".join(p["lines"]) for p in panels(at).values())


def kinds(data: dict) -> set[str]:
    return set(" ".join(data["kinds"].values()).split())


def selected(data: dict, python_line: int) -> list[str]:
    """The panel's lines that light up when `python_line` is followed."""
    return [line for line, py in zip(data["lines"], data["py"] or []) if py == python_line]
