#!/usr/bin/python3
"""Send key presses to the X server in $DISPLAY through the XTEST extension.

Usage: xkeys.py ACTION...   where ACTION is a keysym name, optionally with
modifiers ("ctrl+Right", "shift+Right", "Down"), or "click:X,Y" for a left
click at screen position X,Y.
"""
import ctypes
import sys
import time

x11 = ctypes.CDLL("libX11.so.6")
xtst = ctypes.CDLL("libXtst.so.6")
x11.XOpenDisplay.restype = ctypes.c_void_p
x11.XOpenDisplay.argtypes = [ctypes.c_char_p]
x11.XStringToKeysym.restype = ctypes.c_ulong
x11.XStringToKeysym.argtypes = [ctypes.c_char_p]
x11.XKeysymToKeycode.restype = ctypes.c_ubyte
x11.XKeysymToKeycode.argtypes = [ctypes.c_void_p, ctypes.c_ulong]
x11.XFlush.argtypes = [ctypes.c_void_p]
xtst.XTestFakeKeyEvent.argtypes = [ctypes.c_void_p, ctypes.c_uint, ctypes.c_int, ctypes.c_ulong]
xtst.XTestFakeMotionEvent.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                      ctypes.c_ulong]
xtst.XTestFakeButtonEvent.argtypes = [ctypes.c_void_p, ctypes.c_uint, ctypes.c_int, ctypes.c_ulong]

MODS = {"ctrl": "Control_L", "shift": "Shift_L", "alt": "Alt_L"}


def code(dpy, name):
    sym = x11.XStringToKeysym(name.encode())
    if not sym:
        sys.exit("unknown keysym " + name)
    return x11.XKeysymToKeycode(dpy, sym)


def main():
    dpy = x11.XOpenDisplay(None)
    if not dpy:
        sys.exit("cannot open display")
    for key in sys.argv[1:]:
        if key.startswith("click:"):
            x, y = map(int, key[6:].split(","))
            xtst.XTestFakeMotionEvent(dpy, -1, x, y, 0)
            xtst.XTestFakeButtonEvent(dpy, 1, 1, 0)
            xtst.XTestFakeButtonEvent(dpy, 1, 0, 0)
            x11.XFlush(dpy)
            time.sleep(0.7)
            continue
        parts = key.split("+")
        mods = [code(dpy, MODS[p]) for p in parts[:-1]]
        k = code(dpy, parts[-1])
        for m in mods:
            xtst.XTestFakeKeyEvent(dpy, m, 1, 0)
        xtst.XTestFakeKeyEvent(dpy, k, 1, 0)
        xtst.XTestFakeKeyEvent(dpy, k, 0, 0)
        for m in reversed(mods):
            xtst.XTestFakeKeyEvent(dpy, m, 0, 0)
        x11.XFlush(dpy)
        time.sleep(0.5)


if __name__ == "__main__":
    main()
