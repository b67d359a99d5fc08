"""Provides `load_image` and `halfblocks`: a PNG or JPEG as coloured half-block characters (no Textual).

Each terminal cell shows two pixels, one above the other: `▀` in the top pixel's colour on the
bottom pixel's colour, which every terminal with true colour draws (over SSH and tmux too, where
graphics protocols often fail: anchors-turn2 §B). Decoding is bounded before it starts: the
file size (`parsers.textfile` limit), Pillow's decompression-bomb guard, and a JPEG decoded at a
reduced scale (`draft`) when the pane is smaller than the picture. Both functions are meant for
a worker thread; they raise `ImageError` with a plain message for anything they cannot show.
"""

from __future__ import annotations

from pathlib import Path

from PIL import Image, UnidentifiedImageError
from rich.color import Color
from rich.style import Style
from rich.text import Text

from gpuscope.parsers.files import MAX_BYTES, _human, display_name, open_regular

MAX_PIXELS = 50_000_000
"""Pictures with more pixels than this are refused before decoding (a bomb of a few KB can
claim gigapixels); result figures are a few megapixels."""
KEEP = 1024
"""Longest side kept after decoding: more than any terminal shows in half blocks."""
UPPER = "▀"


class ImageError(Exception):
    """The file cannot be shown as a picture; the message says why."""


def load_image(path: str | Path) -> Image.Image:
    """The picture as RGBA, at most `KEEP` pixels on its longer side."""
    label = display_name(path)
    handle, size, findings = open_regular(path, label)
    if handle is None:
        raise ImageError(findings[0].message)
    with handle:
        if size > MAX_BYTES:
            raise ImageError(f"file is {_human(size)}, over the {_human(MAX_BYTES)} limit (GPUSCOPE_MAX_FILE_MB raises it)")
        try:
            with Image.open(handle) as image:
                if image.width * image.height > MAX_PIXELS:
                    raise ImageError(f"{image.width}×{image.height} pixels is over the {MAX_PIXELS:,}-pixel limit for a picture")
                image.draft("RGB", (KEEP, KEEP))  # JPEG: decode at 1/2, 1/4 or 1/8 scale when that is enough
                image.thumbnail((KEEP, KEEP))
                return image.convert("RGBA")
        except ImageError:
            raise
        except UnidentifiedImageError as error:
            raise ImageError("not a picture Pillow can read (PNG, JPEG, GIF ...): empty, truncated or another kind of file") from error
        except Image.DecompressionBombError as error:
            raise ImageError(f"refused as a decompression bomb: {error}") from error
        except (OSError, ValueError, SyntaxError, EOFError, MemoryError) as error:  # truncated or corrupt data
            raise ImageError(f"the picture cannot be decoded (truncated or corrupt?): {error}") from error


def fit(width: int, height: int, columns: int, rows: int) -> tuple[int, int]:
    """Pixel size that fits `columns` × `rows` cells (2 pixels per cell vertically), aspect kept."""
    if width <= 0 or height <= 0 or columns <= 0 or rows <= 0:
        return 0, 0
    scale = min(columns / width, 2 * rows / height)
    return max(1, round(width * scale)), max(2, round(height * scale / 2) * 2)


def halfblocks(image: Image.Image, columns: int, rows: int, background: tuple[int, int, int] = (0, 0, 0)) -> Text:
    """`image` scaled to fit `columns` × `rows` cells; transparent parts show `background`."""
    width, height = fit(image.width, image.height, columns, rows)
    text = Text(no_wrap=True, overflow="crop")
    if not width:
        return text
    canvas = Image.new("RGBA", (width, height), (*background, 255))
    canvas.alpha_composite(image.resize((width, height), Image.Resampling.LANCZOS))
    pixels = canvas.convert("RGB").load()
    styles: dict[tuple[tuple[int, int, int], tuple[int, int, int]], Style] = {}
    for y in range(0, height, 2):
        for x in range(width):
            key = (pixels[x, y], pixels[x, y + 1])
            style = styles.get(key)
            if style is None:
                style = styles[key] = Style(color=Color.from_rgb(*key[0]), bgcolor=Color.from_rgb(*key[1]))
            text.append(UPPER, style)
        if y + 2 < height:
            text.append("\n")
    return text
