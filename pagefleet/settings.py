"""Every knob of pagefleet, read from ``PAGEFLEET_*`` environment variables.

`.env.example` lists each with its default; `tests/test_settings.py` checks the two stay in step.
"""

from __future__ import annotations

import json
from typing import Literal
from urllib.parse import urlsplit

from pydantic import Field, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """Settings shared by the handlers, the runner and the local stack."""

    model_config = SettingsConfigDict(env_prefix="PAGEFLEET_", extra="ignore")

    # --- where things live ---
    endpoint_url: str | None = Field(
        None, description="S3/SQS endpoint other than AWS's (a moto server); unset means AWS."
    )
    region: str = Field("us-east-1", description="AWS region of the bucket and queues.")
    bucket: str = Field("pagefleet", description="Bucket holding inbox/, outbox/ and jobs/.")
    queue_prefix: str = Field("pagefleet", description="Prefix of the queue names.")

    # --- job-end events (pagefleet/job_events.py) ---
    event_bus: str | None = Field(
        None,
        description="EventBridge bus (name or ARN) that gets one event per finished job "
        "(source pagefleet, detail-type 'Job finished'); unset sends none.",
    )
    webhook_url: str | None = Field(
        None,
        description="http(s) URL that gets each job-end event's detail as a JSON POST; unset "
        "posts none.",
    )
    webhook_timeout_s: float = Field(
        3.0, gt=0, description="Seconds one webhook POST may take before it counts as failed."
    )

    # --- limits on input (rule 4) ---
    chunk_pages: int = Field(
        16,
        ge=1,
        description="Target pages per chunk, counted in text pages: a chunk's target cost is "
        "this many pages with a text layer; a page to OCR counts as its cost says.",
    )
    max_pages: int = Field(
        5000, ge=1, description="Documents with more pages fail: too_many_pages."
    )
    max_bytes: int = Field(
        512 * 1024 * 1024, ge=1, description="Documents larger than this fail: too_large."
    )

    # --- chunk planning: chunks are cut by estimated seconds, not pages ---
    fleet_lanes: int = Field(
        0,
        ge=0,
        description="Conversions the fleet runs at once; a document cheaper than this many "
        "target chunks is spread over them. 0 = workers, or one per CPU core if that is 0.",
    )
    chunk_min_cost_s: float = Field(
        0.5,
        ge=0,
        description="No chunk is planned cheaper than this (estimated seconds) unless the whole "
        "document is, so per-chunk overhead (download, IPC, result, queue: ~0.05 s) stays small.",
    )
    chunk_max_cost_s: float = Field(
        60.0,
        gt=0,
        description="No chunk is planned dearer than this (estimated seconds) unless one page "
        "is, so one chunk never holds a job (keep it well under convert_timeout_s).",
    )
    cost_text_page_s: float = Field(
        0.0033,
        gt=0,
        description="Text-layer converter: seconds of a page with a text layer, less its "
        "characters' part (fitted on the shared corpus through the pipeline at W=2 with "
        "cost_text_char_s: 3.3 ms + 5.7 us a character; pages hold 0-6,000 characters).",
    )
    cost_text_char_s: float = Field(
        5.7e-6,
        ge=0,
        description="Text-layer converter: seconds per character of a text page (see "
        "cost_text_page_s); the splitter counts them on a sample of the document's pages.",
    )
    cost_ocr_page_s: float = Field(
        7.5,
        gt=0,
        description="Text-layer converter: CPU seconds of a page it OCRs, on one thread "
        "(measured on the shared corpus: 3.8-15 s).",
    )
    cost_marker_page_s: float = Field(
        1.1,
        gt=0,
        description="marker: seconds of a page on a GPU shared by its workers (estimated from "
        "18 s per 16-page chunk on an L4 with 3 workers, scaling.py; not measured here).",
    )
    cost_marker_ocr_page_s: float = Field(
        2.2,
        gt=0,
        description="marker in fast mode: seconds of a page without a usable text layer "
        "(estimated as twice a text page; not measured).",
    )

    # --- runner ---
    converter: Literal["text-layer", "marker"] = Field(
        "text-layer", description="Chunk converter: CPU text layer, or marker-pdf on a GPU."
    )
    ocr: Literal["auto", "off", "force"] = Field(
        "auto",
        description="Text-layer converter OCR: pages without a usable text layer (auto), "
        "never (off), or every page (force).",
    )
    workers: int = Field(0, ge=0, description="Worker processes; 0 means one per CPU core.")
    convert_threads: int = Field(
        0,
        ge=0,
        description="CPU threads one conversion may use (OCR); 0 means all cores. The "
        "supervisor gives each of W CPU workers cores // W, so their pools do not fight.",
    )
    convert_timeout_s: float = Field(
        300.0,
        gt=0,
        description="A chunk conversion running longer is stopped; a chunk of several pages is "
        "then retried as two halves, down to the page, so only a page too costly fails.",
    )
    convert_memory_mb: int = Field(
        4096,
        ge=64,
        description="A conversion process growing past this RSS is stopped; its chunk is split "
        "in halves as on a timeout.",
    )
    max_attempts: int = Field(
        3,
        ge=1,
        description="Conversion attempts of a chunk before it is recorded as failed (one that "
        "fails on time or memory and has several pages is split at once instead).",
    )
    visibility_timeout_s: int = Field(
        60, ge=5, description="Chunk message lease; the heartbeat extends it while converting."
    )
    heartbeat_s: float = Field(
        20.0,
        gt=0,
        description="How often a held chunk's lease is extended; at most half the lease.",
    )
    poll_wait_s: int = Field(20, ge=0, le=20, description="SQS long-poll wait.")
    drain_timeout_s: float = Field(
        25.0, ge=0, description="On SIGTERM, how long to finish held chunks before releasing them."
    )
    burst: bool = Field(
        False, description="Exit once the chunk queue is empty (tests and benchmarks)."
    )

    # --- marker ---
    marker_mode: Literal["balanced", "fast"] = Field(
        "balanced",
        description="marker's mode: balanced (VLM layout, full-page OCR) or fast (rf-detr "
        "layout, OCR only where the text layer is unusable).",
    )
    marker_force_ocr: bool = Field(False, description="marker: OCR every page.")
    marker_disable_ocr: bool = Field(
        False, description="marker: never OCR; text layer only, no OCR model server needed."
    )
    marker_pdftext_workers: int = Field(
        1, ge=1, description="marker: pdftext processes per conversion (W workers run already)."
    )
    marker_ocr_error_batch_size: int = Field(
        0, ge=0, description="marker: pages per OCR-error model request; 0 = marker's default."
    )
    marker_layout_batch_size: int = Field(
        0, ge=0, description="surya layout server: most pages per batch; 0 = surya's default."
    )
    marker_inference_url: str | None = Field(
        None,
        description="OpenAI-compatible URL of the server of surya's OCR model (the vLLM sidecar, "
        "e.g. http://127.0.0.1:8000/v1); unset lets surya start its own.",
    )
    marker_inference_parallel: int = Field(
        0, ge=0, description="OCR requests in flight per conversion; 0 = sized by GPU type."
    )
    marker_vllm_gpu_type: str | None = Field(
        None,
        description="surya's VLLM_GPU_TYPE (h100, a10, l4, ...), which sizes the request "
        "concurrency; unset = surya's default (4090).",
    )
    marker_server_startup_timeout_s: float = Field(
        300.0,
        gt=0,
        description="A model server not healthy this long after start fails the conversion "
        "process: surya's own wait for the layout and OCR-error servers it spawns (its VLM "
        "wait is 600 s); a cold instance loads their weights and kernels for the first time.",
    )

    @field_validator("webhook_url")
    @classmethod
    def _webhook_is_http(cls, url: str | None) -> str | None:
        # urllib would open file: and ftp: URLs too; a handler must only ever POST over HTTP.
        parts = urlsplit(url) if url is not None else None
        if parts is not None and not (parts.scheme in ("http", "https") and parts.netloc):
            raise ValueError("must be an http:// or https:// URL")
        return url

    @model_validator(mode="after")
    def _heartbeat_holds_the_lease(self) -> Settings:
        # Half the lease leaves a whole heartbeat for an extension that is slow or retried;
        # a lease that lapses first lets a second runner convert the same chunk.
        if self.heartbeat_s * 2 > self.visibility_timeout_s:
            raise ValueError(
                f"PAGEFLEET_HEARTBEAT_S ({self.heartbeat_s:g}) must be at most half of "
                f"PAGEFLEET_VISIBILITY_TIMEOUT_S ({self.visibility_timeout_s}), or a chunk's "
                "lease lapses before the heartbeat extends it"
            )
        return self


def settings_env(settings: Settings) -> dict[str, str]:
    """``settings`` as the environment of another process (a runner, a handler)."""
    env = {}
    for name, value in settings.model_dump(exclude_none=True).items():
        env[f"PAGEFLEET_{name.upper()}"] = (
            str(value).lower() if isinstance(value, bool) else str(value)
        )
    return env


class SettingsRefused(ValueError):
    """Settings that cannot work (rule 7); the message says why in one line, by variable."""


def refusal(exc: ValidationError) -> SettingsRefused:
    """``exc`` as one line naming each ``PAGEFLEET_*`` variable at fault: a process refused at
    start says so once and exits, rather than crash-looping on a traceback."""
    problems = []
    for error in exc.errors():
        message = error["msg"].removeprefix("Value error, ")
        if error["loc"]:
            message = f"PAGEFLEET_{str(error['loc'][0]).upper()}={error['input']}: {message}"
        problems.append(message)
    return SettingsRefused("; ".join(problems))


def load_settings(**overrides: object) -> Settings:
    """Settings from the environment, with explicit overrides winning; raises
    :class:`SettingsRefused` for settings that cannot work."""
    try:
        return Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as exc:
        raise refusal(exc) from None


def settings_from_terraform_outputs(outputs_json: str, **overrides: object) -> Settings:
    """Settings for a deployed stack, from ``terraform output -json``: its bucket, queue prefix
    and region; everything else from the environment, with ``overrides`` winning."""
    outputs = json.loads(outputs_json)
    found = {
        "bucket": outputs["bucket_name"]["value"],
        "queue_prefix": outputs["queue_prefix"]["value"],
    }
    if "region" in outputs:
        found["region"] = outputs["region"]["value"]
    return load_settings(**{**found, **overrides})
