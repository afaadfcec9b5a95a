#!/usr/bin/python3
"""Reference for test_qwen2_tokenizer: the published Qwen2 byte-level BPE algorithm and GR00T's
Eagle prompt, written from the upstream descriptions with nothing shared with the C++ code.

  - added tokens cut out first (leftmost, longest), on the raw text (the fixture's tokens are all
    normalized=false without lstrip/rstrip; anything else is refused here);
  - NFC (unicodedata) of the text between them;
  - the split pattern through the `regex` module (python3-regex), as Qwen2Tokenizer runs it;
  - GPT-2's bytes_to_unicode and the GPT-2 bpe() loop over merge ranks;
  - the prompt: chat_template.json rendered by Jinja2 the way transformers renders chat
    templates (trim_blocks, lstrip_blocks), then Eagle's <image-N> expansion.

Usage: qwen2_reference.py REQUEST.json RESULT.json
REQUEST: {"folder": str, "texts": [str], "prompts": [{"views": int, "instruction": str,
          "tokens_per_view": int}]}
RESULT:  {"ids": [[int]], "prompt_texts": [str], "prompt_ids": [[int]]}
"""
import json
import sys
import unicodedata

import jinja2
import regex

PATTERN = regex.compile(
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""")


def byte_chars():
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    table, shifted = {}, 0
    for b in range(256):
        if b in printable:
            table[b] = chr(b)
        else:
            table[b] = chr(0x100 + shifted)
            shifted += 1
    return table


class Reference:
    def __init__(self, folder):
        with open(f"{folder}/vocab.json", encoding="utf-8") as f:
            self.vocab = json.load(f)
        self.ranks = {}
        with open(f"{folder}/merges.txt", encoding="utf-8") as f:
            for number, line in enumerate(f):
                line = line.strip()
                if not line or (number == 0 and line.startswith("#version:")):
                    continue
                self.ranks[tuple(line.split())] = len(self.ranks)
        with open(f"{folder}/tokenizer_config.json", encoding="utf-8") as f:
            decoder = json.load(f)["added_tokens_decoder"]
        self.added = {}
        for id_, entry in decoder.items():
            assert not entry["normalized"] and not entry["lstrip"] and not entry["rstrip"]
            self.added[entry["content"]] = int(id_)
        with open(f"{folder}/chat_template.json", encoding="utf-8") as f:
            self.template = json.load(f)["chat_template"]
        self.byte_chars = byte_chars()

    def bpe(self, word):
        word = list(word)
        while len(word) > 1:
            pairs = {(word[i], word[i + 1]) for i in range(len(word) - 1)}
            best = min(pairs, key=lambda p: self.ranks.get(p, float("inf")))
            if best not in self.ranks:
                break
            merged, i = [], 0
            while i < len(word):
                if i + 1 < len(word) and (word[i], word[i + 1]) == best:
                    merged.append(word[i] + word[i + 1])
                    i += 2
                else:
                    merged.append(word[i])
                    i += 1
            word = merged
        return word

    def encode_plain(self, text, ids):
        for piece in PATTERN.findall(unicodedata.normalize("NFC", text)):
            mapped = "".join(self.byte_chars[b] for b in piece.encode("utf-8"))
            ids.extend(self.vocab[t] for t in self.bpe(mapped))

    def encode(self, text):
        ids, start, pos = [], 0, 0
        while pos < len(text):
            match = max((t for t in self.added if text.startswith(t, pos)), key=len, default=None)
            if match is None:
                pos += 1
                continue
            self.encode_plain(text[start:pos], ids)
            ids.append(self.added[match])
            pos = start = pos + len(match)
        self.encode_plain(text[start:], ids)
        return ids

    def prompt_text(self, views, instruction, tokens_per_view):
        env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True)
        content = [{"type": "image"} for _ in range(views)] + [{"type": "text", "text": instruction}]
        text = env.from_string(self.template).render(
            messages=[{"role": "user", "content": content}], add_generation_prompt=True)

        def expand(m):
            return f"<image {m.group(2)}><img>" + "<IMG_CONTEXT>" * tokens_per_view + "</img>"

        return regex.sub(r"<(image|video)-(\d+)>", expand, text)


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        request = json.load(f)
    ref = Reference(request["folder"])
    result = {"ids": [ref.encode(t) for t in request["texts"]], "prompt_texts": [], "prompt_ids": []}
    for p in request["prompts"]:
        text = ref.prompt_text(p["views"], p["instruction"], p["tokens_per_view"])
        result["prompt_texts"].append(text)
        result["prompt_ids"].append(ref.encode(text))
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()
