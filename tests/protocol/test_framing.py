from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.protocol import LineFramer, Oversize


def test_lines_split_across_chunks_come_out_whole():
    f = LineFramer()
    assert f.feed(b'{"a":') == []
    assert f.feed(b'1}\n{"b"') == [b'{"a":1}']
    assert f.feed(b":2}\r\n\n") == [b'{"b":2}', b""]
    assert f.pending == 0


def test_line_larger_than_64k_is_not_cut():
    big = b"x" * (3 * 1024 * 1024)
    f = LineFramer()
    out = []
    for i in range(0, len(big), 65536):
        out += f.feed(big[i:i + 65536])
    out += f.feed(b"\n")
    assert out == [big]


def test_oversize_line_is_reported_then_framing_recovers():
    f = LineFramer(max_size=100)
    out = f.feed(b"y" * 150)
    out += f.feed(b"y" * 150 + b"\nnext\n")
    assert isinstance(out[0], Oversize)
    assert out[0].size == 300 and out[0].head.startswith(b"yyy")
    assert out[1] == b"next"


def test_unterminated_tail_is_delivered_at_eof():
    f = LineFramer()
    f.feed(b'{"half":')
    assert f.eof() == [b'{"half":']


@settings(max_examples=300)
@given(st.lists(st.binary(max_size=300), max_size=30), st.integers(min_value=1, max_value=200))
def test_arbitrary_chunks_never_raise_and_lose_nothing(chunks, cap):
    f = LineFramer(max_size=cap)
    frames = []
    for c in chunks:
        frames += f.feed(c)
    frames += f.eof()
    data = b"".join(chunks)
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    want = [("OVER", len(l)) if len(l) > cap else (l[:-1] if l.endswith(b"\r") else l) for l in lines]
    got = [fr if isinstance(fr, bytes) else ("OVER", fr.size) for fr in frames]
    assert got == want
