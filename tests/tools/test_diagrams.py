"""tools/diagrams.py: the static diagrams the chapters link, drawn again from code."""

from tools import diagrams


def test_the_mirrored_step_shows_each_replica_and_its_share():
    fig = diagrams.mirrored_step(replicas=4, global_batch=512)
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert sum("replica" in t and "model copy" in t for t in texts) == 4
    assert texts.count("128 examples") == 4
    assert any("512 examples" in t for t in texts)


def test_main_writes_the_picture_chapter_3_links(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(diagrams, "IMAGES", tmp_path / "notebooks" / "images")
    diagrams.IMAGES.mkdir(parents=True)
    assert diagrams.main() == 0
    assert (diagrams.IMAGES / "mirrored_strategy_step.png").read_bytes()[:4] == b"\x89PNG"
    assert "notebooks/images/mirrored_strategy_step.png" in capsys.readouterr().out
