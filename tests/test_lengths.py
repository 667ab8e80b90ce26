import pytest

from loca.core.lengths import label, parse_length, parse_lengths, parse_seeds


@pytest.mark.parametrize("text,tokens", [("8k", 8000), ("256K", 256000), ("50000", 50000),
                                         (" 96k ", 96000), ("1.5k", 1500), (12345, 12345),
                                         ("1m", 1_000_000), ("2M", 2_000_000), ("0.5m", 500_000)])
def test_parse_length(text, tokens):
    assert parse_length(text) == tokens


@pytest.mark.parametrize("bad", ["", "k", "-8k", "8m", "2.1m", "0", "eight", "1g", True])
def test_parse_length_rejects(bad):
    with pytest.raises(ValueError):
        parse_length(bad)


def test_lists_and_labels():
    assert parse_lengths("8k,16k,50000") == [8000, 16000, 50000]
    assert parse_seeds("0-4") == [0, 1, 2, 3, 4]
    assert parse_seeds("2-3,9") == [2, 3, 9]
    assert [label(t) for t in (8000, 256000, 50001, 1_000_000, 2_000_000, 1_500_000)] == [
        "8k", "256k", "50001", "1m", "2m", "1500k"]
    assert all(parse_length(label(t)) == t for t in (8000, 512_000, 1_000_000, 1_500_000, 2_000_000))
    with pytest.raises(ValueError):
        parse_seeds("4-2")


def test_named_groups_expand_in_place():
    assert parse_lengths("long") == [512_000, 1_000_000, 2_000_000]
    assert parse_lengths("8k,LONG,1000k") == [8000, 512_000, 1_000_000, 2_000_000]
    assert parse_lengths("all") == parse_lengths("default") + parse_lengths("long")
    assert parse_lengths("default")[-1] == 256_000


def test_duplicates_collapse_in_order():
    assert parse_lengths("8k,8000,16k,8k") == [8000, 16000]
    assert parse_seeds("0,0,2-3,1-2") == [0, 2, 3, 1]


@pytest.mark.parametrize("bad", ["", " , ", "8000000k", "2000001", "0k", "lengthy"])
def test_lengths_are_bounded_and_present(bad):
    with pytest.raises(ValueError):
        parse_lengths(bad)


@pytest.mark.parametrize("bad", ["", "-5", "-1-3", "4-2", "x", "0-100000000", "99999999999", "1.5"])
def test_seeds_are_non_negative_bounded_and_present(bad):
    with pytest.raises(ValueError):
        parse_seeds(bad)


def test_a_huge_seed_range_is_refused_before_it_is_built():
    import tracemalloc

    tracemalloc.start()
    with pytest.raises(ValueError, match="too many seeds"):
        parse_seeds("0-2000000000")
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 1_000_000
