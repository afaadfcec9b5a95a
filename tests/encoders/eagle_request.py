"""The request a C++ Eagle test writes for its torch reference (a JSON file: the tiny Eagle folder,
the GR00T checkpoint holding the backbone's tensors, the inputs and the output prefix), read once
for the three references (features, vision-tower gradients, LLM input gradients)."""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "encoders_ref"))
import eagle_reference as eagle  # noqa: E402,F401  (the references use it through this module)
from safetensors_io import load_file  # noqa: E402


def read_request(path):
    """(request, the backbone's EagleDims, the checkpoint's tensors as stored)."""
    request = json.load(open(path))
    eagle_config = json.load(open(os.path.join(request["eagle_folder"], "config.json")))
    gr00t_config = json.load(open(os.path.join(request["checkpoint"], "config.json")))
    dims = eagle.EagleDims.from_configs(eagle_config, gr00t_config["backbone_cfg"])
    stored, _ = load_file(os.path.join(request["checkpoint"], "model.safetensors"))
    return request, dims, stored
