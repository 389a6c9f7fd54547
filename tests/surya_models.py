"""Random-initialised stand-ins for the weights surya 0.22.1's own model servers load, written
where those servers look for downloaded weights, so the contract test
(tests/test_marker_contract.py) lets surya spawn its real servers offline.

What each server loads, read from surya-ocr 0.22.1:

- The OCR-error server (``python -m surya.ocr_error.server``) loads
  ``AutoModelForSequenceClassification`` and ``AutoTokenizer`` from the local folder of its
  ``s3://`` checkpoint (surya/ocr_error/loader.py:14-36,72-84), ``MODEL_CACHE_DIR`` joined with
  the path after ``s3://`` (surya/common/s3.py:131-141), and downloads nothing when that folder
  holds a ``manifest.json`` whose ``files`` all exist (surya/common/s3.py:67-82,86-90). The
  stand-in is a real ``DistilBertForSequenceClassification`` (the checkpoint's class, loader.py
  :41-47) of one layer and 32 dimensions.
- The fast-layout server (``python -m surya.fast_layout.server``) resolves its ``hf://<repo>``
  checkpoint with ``snapshot_download`` (surya/common/rfdetr_torch.py:181-193), which with
  ``HF_HUB_OFFLINE=1`` returns ``<HF_HOME>/hub/models--<org>--<name>/snapshots/<refs/main>``
  when that folder exists (huggingface_hub 1.33.0, _snapshot_download.py:309-340; the folder
  name: file_download.py:747-755). It reads ``config.json`` and the first ``*.pth`` there
  (rfdetr_torch.py:101-135) and builds rf-detr-large, whose size is fixed by
  ``LARGE_ARGS`` (surya/common/rfdetr/predictor.py:23-128) whatever the config says, except the
  resolution and positional-encoding size: so it cannot be made tiny, only run at the 448 px the
  real layout model was trained at. Its weights are loaded with ``strict=False``
  (predictor.py:150-160), so the checkpoint holds only the detection head, set so that no box
  scores above any threshold: the network is the random initialisation ``build_model`` gives
  it, the page gets no layout boxes, and the test's pages read the same on every run.
- The reading-order head (``hf://<repo>/order``) is loaded by the same server for pages
  without a text layer (surya/common/order/predictor.py:26-42,115-127): a
  ``ReadingOrderAR`` of one layer and 16 dimensions, loaded strictly.
"""

from __future__ import annotations

import json
from pathlib import Path

# surya/settings.py: OCR_ERROR_MODEL_CHECKPOINT, FAST_LAYOUT_MODEL_CHECKPOINT and
# FAST_ORDER_MODEL_CHECKPOINT (tests/test_marker_contract.py checks them against surya's).
OCR_ERROR_CHECKPOINT = "s3://ocr_error_detection/2025_02_18"
LAYOUT_CHECKPOINT = "hf://datalab-to/surya_layout2"
ORDER_SUBFOLDER = "order"
# Any 40-hex commit: refs/main names the snapshot folder.
SNAPSHOT = "0" * 40
LAYOUT_RESOLUTION = 448
PATCH_SIZE = 16  # LARGE_ARGS["patch_size"]
HIDDEN_DIM = 256  # LARGE_ARGS["hidden_dim"]: the decoder's width, which the head reads
NO_BOX_LOGIT = -20.0  # sigmoid(-20) ~ 2e-9: below every confidence threshold
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *"abcdefghijklmnopqrstuvwxyz0123456789"]


def ocr_error_dir(model_cache_dir: Path) -> Path:
    return model_cache_dir / OCR_ERROR_CHECKPOINT.removeprefix("s3://")


def layout_snapshot(hf_home: Path) -> Path:
    repo = LAYOUT_CHECKPOINT.removeprefix("hf://")
    return hf_home / "hub" / ("models--" + repo.replace("/", "--")) / "snapshots" / SNAPSHOT


def write_ocr_error_model(model_cache_dir: Path) -> Path:
    """A one-layer DistilBERT classifier whose head answers "good" (label 0) for every text, so
    marker keeps each page's text layer as a downloaded model would for clean text."""
    import torch
    from transformers import (
        DistilBertConfig,
        DistilBertForSequenceClassification,
        DistilBertTokenizer,
    )

    folder = ocr_error_dir(model_cache_dir)
    folder.mkdir(parents=True, exist_ok=True)
    vocab = folder / "vocab.txt"
    vocab.write_text("\n".join(VOCAB) + "\n")
    DistilBertTokenizer(vocab_file=str(vocab)).save_pretrained(folder)
    config = DistilBertConfig(
        vocab_size=len(VOCAB),
        dim=32,
        hidden_dim=64,
        n_layers=1,
        n_heads=2,
        # surya/ocr_error/model/config.py: ID2LABEL
        id2label={0: "good", 1: "bad"},
        label2id={"good": 0, "bad": 1},
    )
    torch.manual_seed(0)
    model = DistilBertForSequenceClassification(config)
    with torch.no_grad():
        model.classifier.weight.zero_()
        model.classifier.bias.copy_(torch.tensor([5.0, -5.0]))
    model.save_pretrained(folder)
    files = sorted(p.name for p in folder.iterdir() if p.name != "manifest.json")
    (folder / "manifest.json").write_text(json.dumps({"files": files}))
    return folder


def write_layout_model(hf_home: Path) -> Path:
    """rf-detr's config and detection head, and the reading-order head, as a Hugging Face cache
    snapshot of the layout repository."""
    import torch
    from surya.common.order.order_ar import LAYOUT_CLASSES, ReadingOrderAR

    snapshot = layout_snapshot(hf_home)
    (snapshot / ORDER_SUBFOLDER).mkdir(parents=True, exist_ok=True)
    repo_folder = snapshot.parent.parent
    (repo_folder / "refs").mkdir(exist_ok=True)
    (repo_folder / "refs" / "main").write_text(SNAPSHOT)

    categories = [{"id": i, "name": name} for i, name in enumerate(LAYOUT_CLASSES)]
    (snapshot / "config.json").write_text(
        json.dumps(
            {
                "arch": "rf-detr-large",
                "categories": categories,
                "resolution": LAYOUT_RESOLUTION,
                "positional_encoding_size": LAYOUT_RESOLUTION // PATCH_SIZE,
            }
        )
    )
    # class_embed has one output per category plus rf-detr's "no object" (build_model's
    # num_classes + 1); predictor.py resizes the head to the checkpoint's before loading it.
    classes = len(categories) + 1
    head = {
        "class_embed.weight": torch.zeros(classes, HIDDEN_DIM),
        "class_embed.bias": torch.full((classes,), NO_BOX_LOGIT),
    }
    torch.save({"model": head}, snapshot / "rfdetr_layout.pth")

    torch.manual_seed(0)
    feat_hw = LAYOUT_RESOLUTION // PATCH_SIZE  # the projector's feature map, a side
    order = ReadingOrderAR(d=16, layers=1, feat_dim=HIDDEN_DIM, feat_hw=feat_hw)
    torch.save(
        {
            "d": 16,
            "layers": 1,
            "feat_dim": HIDDEN_DIM,
            "feat_hw": feat_hw,
            "res": LAYOUT_RESOLUTION,
            "model": order.state_dict(),
        },
        snapshot / ORDER_SUBFOLDER / "order_ar.pt",
    )
    return snapshot
