"""Workloads as data (benchdb.backends.openai.workload): parsing, the canonical definition that is
the identity, seeded generation and the refusals, each one line naming the key."""

from __future__ import annotations

import json

import pytest

from benchdb.backends.openai import workload
from benchdb.backends.openai.sessions import PrefixEstimate
from benchdb.errors import BenchdbError


def test_the_canonical_definition_names_every_key_and_parses_back_to_itself():
    w = workload.parse("multi-turn:turns=3,think=1.5s,input=uniform:50:80,output=normal:64:8,prefix=128,group=4")
    text = w.canonical()
    assert text == ("multi-turn:input=uniform:50:80,output=normal:64:8,turns=3,think=1.5s,prefix=128,group=4,seed=0")
    assert workload.parse(text).canonical() == text
    # the scenario's lengths are the defaults: a plain single workload is the input shape it runs at
    assert workload.parse("single", seq_len=128, gen_tokens=32).canonical() == "single:input=128,output=32,seed=0"


def test_the_same_seed_sends_the_same_conversations_and_another_seed_others():
    a = workload.parse("multi-turn:turns=4,input=uniform:10:90,output=uniform:1:50,seed=7")
    b = workload.parse("multi-turn:turns=4,input=uniform:10:90,output=uniform:1:50,seed=7")
    c = workload.parse("multi-turn:turns=4,input=uniform:10:90,output=uniform:1:50,seed=8")
    assert [a.conversation(n) for n in range(20)] == [b.conversation(n) for n in range(20)]
    assert [a.conversation(n) for n in range(20)] != [c.conversation(n) for n in range(20)]
    lengths = [len(t.text.split()) for n in range(200) for t in a.conversation(n)[1]]
    assert min(lengths) >= 10 and max(lengths) <= 90 and len(set(lengths)) > 40


def test_a_conversation_thinks_between_turns_never_before_its_first():
    w = workload.parse("multi-turn:turns=3,think=2s,input=5,output=5")
    _, turns = w.conversation(0)
    assert [t.think_s for t in turns] == [0.0, 2.0, 2.0]


def test_shared_prefix_groups_share_their_prefix_and_only_the_share_asked_for_has_one():
    w = workload.parse("shared-prefix:prefix=64,group=5,share=0.5,input=10,output=4")
    prefixes = [w.conversation(n)[0] for n in range(400)]
    with_prefix = [p for p in prefixes if p]
    assert 0.4 < len(with_prefix) / len(prefixes) < 0.6
    assert all(len(p.split()) == 64 for p in with_prefix)
    # requests 0-4 are one group (those of them in the share carry the same prefix), 5-9 the next
    group0 = {p for p in prefixes[:5] if p}
    assert len(group0) <= 1 and not group0 & {p for p in prefixes[5:10] if p}


def test_never_cached_prompts_share_no_prefix_block_with_each_other():
    w = workload.parse("single:input=64,output=4,never-cached=true")
    est = PrefixEstimate()
    shared = 0
    for n in range(300):
        words = w.conversation(n)[1][0].text.split()
        shared += est.shared(words)
        est.remember(words)
    assert shared == 0
    # a second run of the same workload shares nothing with the first either (its own word)
    again = workload.parse("single:input=64,output=4,never-cached=true")
    assert again.canonical() == w.canonical()
    assert all(est.shared(again.conversation(n)[1][0].text.split()) == 0 for n in range(300))
    # without the mode, the same seed sends the same prompts: a second run finds all of them
    plain = workload.parse("single:input=64,output=4")
    est2 = PrefixEstimate()
    for n in range(300):
        est2.remember(plain.conversation(n)[1][0].text.split())
    assert all(est2.shared(plain.conversation(n)[1][0].text.split()) == 64 for n in range(300))
    one = workload.parse("shared-prefix:prefix=32,group=300,input=64,output=4")
    est3, hits = PrefixEstimate(), 0
    for n in range(50):
        prefix, turns = one.conversation(n)
        words = (prefix + " " + turns[0].text).split()
        hits += est3.shared(words) > 0
        est3.remember(words)
    assert hits == 49  # every request after the first finds the group's 32 words (two blocks)


def test_a_length_file_is_drawn_from_and_named_by_its_content(tmp_path):
    f = tmp_path / "lengths.txt"
    f.write_text("10\n20\n30\n")
    w = workload.parse(f"single:input=file:{f},output=8")
    drawn = {len(w.conversation(n)[1][0].text.split()) for n in range(100)}
    assert drawn == {10, 20, 30}
    assert w.canonical().startswith("single:input=file:") and str(tmp_path) not in w.canonical()


def test_a_yaml_file_defines_the_same_workload_as_the_inline_form(tmp_path):
    f = tmp_path / "w.yaml"
    f.write_text("kind: multi-turn\nturns: 2\ninput: 30\noutput: 8\nthink: 0.5\n")
    inline = workload.parse("multi-turn:turns=2,input=30,output=8,think=0.5")
    assert workload.parse(str(f)).canonical() == inline.canonical()


def test_a_trace_replays_its_lines_in_time_order_with_shared_blocks_as_shared_text(tmp_path):
    f = tmp_path / "trace.jsonl"
    lines = [
        {"timestamp": 20, "input_length": 40, "output_length": 3, "hash_ids": [1, 2, 3]},
        {"timestamp": 0, "input_length": 30, "output_length": 5, "hash_ids": [1, 2]},
    ]
    f.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    w = workload.parse(f"trace:file={f},block=16")
    first, second = w.replayed(0), w.replayed(1)
    assert (first.at_s, second.at_s) == (0.0, 0.02) and first.max_tokens == 5
    # wall-clock timestamps count from the trace's first line
    f2 = tmp_path / "wall.jsonl"
    f2.write_text("\n".join(json.dumps(dict(x, timestamp=x["timestamp"] + 1.7e12)) for x in lines))
    assert workload.parse(f"trace:file={f2}").replayed(1).at_s == pytest.approx(0.02)
    assert len(first.text.split()) == 30 and len(second.text.split()) == 40
    assert second.text.split()[:30] == first.text.split()[:30]  # blocks 1 and 2 are the same text


@pytest.mark.parametrize(
    "text, says",
    [
        ("chat-ish:turns=2", "unknown kind 'chat-ish'"),
        ("multi-turn:turns=0", "turns=0 must be a number >= 1"),
        ("multi-turn:never-cached=true", "unknown key 'never-cached'"),
        ("single:input=uniform:9:3", "input='uniform:9:3'"),
        ("single:input=normal:x:1", "give N, uniform:LO:HI, normal:MEAN:SD or file:PATH"),
        ("shared-prefix:input=5", "give prefix=TOKENS"),
        ("shared-prefix:prefix=8,share=1.5", "share=1.5 must be a number >= 0 and at most 1"),
        ("multi-turn:turns", "'turns' is not key=value"),
        ("trace:block=16", "give file=PATH"),
        ("single:never-cached=ture", "never-cached=ture must be true or false"),
        ("multi-turn:turns=2.7", "turns=2.7 must be a number >= 1"),
        ("multi-turn:think=inf", "think=inf must be a number >= 0"),
        ("multi-turn:think=nan", "think=nan must be a number >= 0"),
        ("single:input=normal:inf:1", "input='normal:inf:1'"),
        ("single:input=2000000", "(1 to 2^20 tokens)"),
        ("no/such/workload.yaml", "--workload no/such/workload.yaml: no such file"),
        ("trace:file=/no/such/trace.jsonl", "--workload trace file /no/such/trace.jsonl"),
    ],
)
def test_a_bad_definition_is_one_line_naming_the_key(text, says):
    with pytest.raises(BenchdbError) as err:
        workload.parse(text)
    assert says in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize(
    "line, says",
    [
        ('{"timestamp": -1, "input_length": 4, "output_length": 1}', "timestamp -1"),
        ('{"timestamp": 0, "input_length": 0, "output_length": 1}', "input_length 0"),
        ('{"timestamp": 0, "input_length": 2.5, "output_length": 1}', "input_length 2.5"),
        ('{"timestamp": 0, "input_length": 4}', "output_length None"),
        ('{"timestamp": 0, "input_length": 4, "output_length": 1, "hash_ids": 3}', "hash_ids must be a list"),
        ("[1, 2]", "not a JSON object"),
        ("{", "not JSON"),
    ],
)
def test_a_trace_line_that_cannot_be_replayed_is_named(tmp_path, line, says):
    f = tmp_path / "t.jsonl"
    f.write_text('{"timestamp": 0, "input_length": 4, "output_length": 1}\n' + line + "\n")
    with pytest.raises(BenchdbError) as err:
        workload.parse(f"trace:file={f}")
    assert f"line 2: {says}" in str(err.value) or f"line 2: {says.split()[0]}" in str(err.value), str(err.value)


def test_a_trace_nested_past_the_depth_limit_is_refused_in_one_line(tmp_path):
    f = tmp_path / "deep.jsonl"
    f.write_text('{"timestamp": 0, "input_length": 4, "output_length": 1, "x": ' + "[" * 500 + "]" * 500 + "}\n")
    with pytest.raises(BenchdbError) as err:
        workload.parse(f"trace:file={f}")
    assert "line 1: not JSON (or nested too deep)" in str(err.value) and "\n" not in str(err.value)
