"""Which images a pi ``prompt`` command carries: a pure policy over facts the caller gathered.

Design: docs/design/protocols.md#harness.protocols.pi_images
"""

from __future__ import annotations

import base64
import os
import posixpath
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ALLOWED_IMAGE_EXTENSIONS",
    "IMAGE_MIME_TYPES",
    "MAX_IMAGE_COUNT",
    "MAX_TOTAL_IMAGE_BYTES",
    "ImageCandidate",
    "is_inside",
    "select_images",
]

#: ref §2.7: at most this many images per prompt.
MAX_IMAGE_COUNT = 10
#: ref §2.7: at most this many image bytes (before base64) per prompt.
MAX_TOTAL_IMAGE_BYTES = 20 * 1024 * 1024
#: ref §2.7: the extensions pi's ``images`` field accepts, with the MIME type each is sent as.
IMAGE_MIME_TYPES: dict[str, str] = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}
ALLOWED_IMAGE_EXTENSIONS = frozenset(IMAGE_MIME_TYPES)


@dataclass(frozen=True, slots=True)
class ImageCandidate:
    """What the IO shell found out about one requested image path.

    ``realpath`` is ``None`` when the path could not be resolved (missing, dangling symlink,
    permission denied); ``size`` is the stat size of the resolved file (``None`` when stat
    failed); ``data`` is ``None`` when reading failed. ``upload_root`` given to
    :func:`select_images` must be resolved the same way as ``realpath``.
    """

    path: str
    realpath: str | None
    size: int | None
    is_file: bool
    data: bytes | None


def is_inside(root: str, path: str, sep: str = os.sep) -> bool:
    """True when ``path`` is ``root`` or below it, compared component-wise.

    ``/uploads-evil/x.png`` is not inside ``/uploads``: the root must be followed by ``sep``.
    Both arguments are resolved paths from the same platform (``sep`` is its separator).
    """
    if not root:
        return False
    trimmed = root.rstrip(sep) or sep
    if path == trimmed:
        return True
    prefix = trimmed if trimmed.endswith(sep) else trimmed + sep
    return path.startswith(prefix)


def _extension(path: str, sep: str) -> str:
    name = path.rsplit(sep, 1)[-1].rsplit("/", 1)[-1]
    return posixpath.splitext(name)[1].lower()


def select_images(
    candidates: Sequence[ImageCandidate], upload_root: str, *, sep: str = os.sep
) -> list[dict[str, Any]]:
    """The ``images`` items for pi's ``prompt`` command: ``{type, data (base64), mimeType}``.

    Applies ref §2.7's limits in candidate order (see the module docstring). Never raises on
    a bad candidate: every rejection is a skip (seed 000 §5.10). ``upload_root`` is required;
    an empty root admits nothing.
    """
    images: list[dict[str, Any]] = []
    total = 0
    for candidate in candidates:
        if len(images) >= MAX_IMAGE_COUNT:
            break  # PI-IMAGE-001
        if not candidate.path or candidate.realpath is None or not candidate.is_file:
            continue  # PI-IMAGE-004: missing, unresolved or not a regular file
        if not is_inside(upload_root, candidate.realpath, sep):
            continue  # PI-IMAGE-004: resolved outside the upload root
        mime = IMAGE_MIME_TYPES.get(_extension(candidate.realpath, sep))
        if mime is None:
            continue  # PI-IMAGE-003
        if candidate.data is None:
            continue  # PI-IMAGE-005: unreadable images are skipped, not fatal
        weight = max(candidate.size or 0, len(candidate.data))
        if total + weight > MAX_TOTAL_IMAGE_BYTES:
            continue  # PI-IMAGE-002: a smaller image later may still fit
        total += weight
        images.append(
            {
                "type": "image",
                "data": base64.b64encode(candidate.data).decode("ascii"),
                "mimeType": mime,
            }
        )
    return images
