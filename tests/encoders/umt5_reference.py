#!/usr/bin/python3
"""Reference for test_umt5_tokenizer, written from Wan2.1's wan/modules/tokenizers.py and
DreamZero's dreamzero_cotrain.py (collate) with nothing shared with the C++ code:
  - clean='whitespace': html.unescape twice, strip, regex \\s+ -> ' ', strip (ftfy is not
    installable here; the corpus is text that ftfy leaves alone);
  - T5-style encoding with python3-sentencepiece: ids, truncation to seq_len - 1, </s>, <pad>
    padding and the attention mask;
  - DreamZero's per-robot templates around the lower-cased instruction;
  - html.unescape on every HTML5 entity name and on numeric references, and str.lower().

Usage: umt5_reference.py REQUEST.json RESULT.json
"""
import html
import html.entities
import json
import sys

import regex
import sentencepiece

FOUR_VIEWS = (" The video is split into four views: The top-left view shows the camera view from the robot's "
              "head, the top-right view shows the camera view from the right hand, the bottom-left view shows "
              "the camera view from the left hand, and the bottom-right view is a black screen (inactive view). "
              "The robot ")
DROID = (" The video is split into three views: The top view shows the camera view from the robot's wrist, the "
         "bottom-left view shows the camera view from the left exterior camera, and the bottom-right view shows "
         "the camera view from the right exterior camera. During training, one of the two bottom exterior views "
         "may be a black screen (dropped view). The robot ")
YAM = (" The video is split into four views: The top-left view shows the top camera, the top-right view shows "
       "the right camera, the bottom-left view shows the left camera, and the bottom-right view is a black "
       "screen. The robot ")


def template(robot, text, num_views):
    x = text.lower()
    if num_views > 1 and robot == "agibot":
        return "A multi-view video shows that a robot " + x + FOUR_VIEWS + x
    if robot == "oxe_droid":
        return "A multi-view video shows that a robot " + x + DROID + x
    if robot in ("gr1_unified", "mecka_hands"):
        return "A single view video shows that a human " + x
    if robot == "xdof":
        return "A multi-view video shows that a robot " + x + FOUR_VIEWS + x
    if robot == "yam":
        return "A multi-view video shows that a robot " + x + YAM + x
    raise ValueError(robot)


def clean(text):
    text = html.unescape(html.unescape(text)).strip()
    return regex.sub(r"\s+", " ", text).strip()


def encode(sp, text, seq_len):
    ids = sp.encode(clean(text))[: seq_len - 1] + [sp.piece_to_id("</s>")]
    length = len(ids)
    pad = sp.piece_to_id("<pad>")
    return {"ids": ids + [pad] * (seq_len - length), "mask": [1] * length + [0] * (seq_len - length),
            "length": length}


def html_cases():
    cases = []
    for name in html.entities.html5:
        cases += ["&" + name, "&" + name + "x;", "a&" + name.rstrip(";") + "b"]
    cases += ["&#0;", "&#13;", "&#128;", "&#x80;", "&#x9F;", "&#x81;", "&#55296;", "&#xD800;", "&#x110000;",
              "&#99999999999999999999;", "&#1;", "&#11;", "&#127;", "&#65534;", "&#x10FFFF;", "&#x1F600;",
              "&#65", "&#x41", "&#X41;", "&#;", "&#x;", "&#xg;", "&amp", "&ampx", "&amp;amp;", "&notit;",
              "&notin;", "&noti", "& amp;", "&&amp;", "&" + "a" * 40 + ";", "&lt3 &gt;&gt &#39;s", "&\u00e9;",
              "tail &", "&;", "&#x26;amp;"]
    return [(c, html.unescape(c)) for c in cases]


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        request = json.load(f)
    sp = sentencepiece.SentencePieceProcessor(model_file=request["model"])
    seq_len = request["seq_len"]
    result = {
        "cleaned": [clean(t) for t in request["texts"]],
        "encoded": [encode(sp, t, seq_len) for t in request["texts"]],
        "prompts": [template(p["robot"], p["instruction"], p["num_views"]) for p in request["prompts"]],
        "prompt_encoded": [encode(sp, template(p["robot"], p["instruction"], p["num_views"]), seq_len)
                           for p in request["prompts"]],
        "lower": [t.lower() for t in request["lower"]],
        "html": html_cases(),
    }
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()
