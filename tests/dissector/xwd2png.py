#!/usr/bin/python3
"""Convert an XWD screen dump (as Xvfb -fbdir writes it) to PNG.

Only what Xvfb produces is handled: ZPixmap, 24/32 bits per pixel, TrueColor.
Usage: xwd2png.py IN.xwd OUT.png [X Y W H]  (optional crop)
"""
import struct
import sys

import numpy as np
import matplotlib
matplotlib.use("Agg")
import matplotlib.image as mpimg

FIELDS = ("header_size file_version pixmap_format pixmap_depth width height xoffset "
          "byte_order bitmap_unit bitmap_bit_order bitmap_pad bits_per_pixel bytes_per_line "
          "visual_class red_mask green_mask blue_mask bits_per_rgb colormap_entries ncolors "
          "window_width window_height window_x window_y window_bdrwidth").split()


def main():
    data = open(sys.argv[1], "rb").read()
    for endian in (">", "<"):
        hdr = dict(zip(FIELDS, struct.unpack(endian + "25I", data[:100])))
        if hdr["file_version"] == 7:
            break
    else:
        sys.exit("not an XWD version 7 file")
    if hdr["pixmap_format"] != 2 or hdr["bits_per_pixel"] not in (24, 32):
        sys.exit("unsupported XWD layout: %r" % hdr)
    off = hdr["header_size"] + 12 * hdr["ncolors"]
    h, bpl, w = hdr["height"], hdr["bytes_per_line"], hdr["width"]
    bpp = hdr["bits_per_pixel"] // 8
    raw = np.frombuffer(data, dtype=np.uint8, count=h * bpl, offset=off).reshape(h, bpl)
    px = raw[:, : w * bpp].reshape(h, w, bpp).astype(np.uint32)
    if hdr["byte_order"] == 0:  # LSBFirst
        val = sum(px[:, :, i] << (8 * i) for i in range(bpp))
    else:
        val = sum(px[:, :, i] << (8 * (bpp - 1 - i)) for i in range(bpp))
    out = np.zeros((h, w, 3), dtype=np.uint8)
    for ch, mask in enumerate((hdr["red_mask"], hdr["green_mask"], hdr["blue_mask"])):
        shift = (mask & -mask).bit_length() - 1
        out[:, :, ch] = ((val & mask) >> shift).astype(np.uint8)
    if len(sys.argv) == 7:
        x, y, cw, ch_ = map(int, sys.argv[3:7])
        out = out[y : y + ch_, x : x + cw]
    mpimg.imsave(sys.argv[2], out)


if __name__ == "__main__":
    main()
