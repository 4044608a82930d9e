"""The font registry of the synthetic faces: the wide set adds training fonts only, a split without any installed
font names the packages to install, unknown splits, font sets and keys are refused."""

from __future__ import annotations

import pytest

from vision.synth import fontfiles


def test_wide_font_set_adds_training_editions_and_leaves_the_base_pool_alone() -> None:
    from vision.synth.scene import style_pool

    base = {key for key, _ in fontfiles.available_fonts("train")}
    wide = {key for key, _ in fontfiles.available_fonts("train", "wide")}
    if wide == base:
        pytest.skip("no font of the wide set is installed (Debian packages listed in vision/synth/fontfiles.py)")
    assert base < wide
    assert fontfiles.available_fonts("heldout", "wide") == fontfiles.available_fonts("heldout")
    assert {style.font_key for style in style_pool("train", 64)} <= base  # what the bench games were drawn from
    assert {style.font_key for style in style_pool("train", 96, "wide")} <= wide
    with pytest.raises(ValueError, match="font set"):
        fontfiles.available_fonts("train", "huge")


def test_a_split_without_fonts_names_the_packages_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fontfiles, "_locate", lambda spec: None)  # no font package installed
    fontfiles._available.cache_clear()
    try:
        with pytest.raises(
            FileNotFoundError, match=r"no digits font for split 'heldout'.*fonts-freefont-ttf \(debian\)"
        ):
            fontfiles.available_fonts("heldout")
        with pytest.raises(FileNotFoundError, match=r"no wordmark font for split 'train'.*fonts-liberation"):
            fontfiles.available_wordmark_fonts("train")
    finally:
        fontfiles._available.cache_clear()  # the next caller looks the installed fonts up again


def test_unknown_splits_and_keys_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown split 'test'"):
        fontfiles.available_fonts("test")
    with pytest.raises(KeyError):
        fontfiles.digit_font_spec("comic-sans")
    assert fontfiles.digit_font_spec("dosis-bold").package == "fonts-dosis"  # a named edition's font is found too
