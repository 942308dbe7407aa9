"""The session store file (seed 001 §8: "OD persists only the opaque session id plus compatibility
metadata in its own database").

Rules: SESSION-STORE-001, SESSION-STORE-002 (conformance/rules/sessions.py).
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.defs.types import ResumeStyle
from harness.host.native_sessions import (
    STORE_FORMAT_VERSION,
    CompatibilityKey,
    ExecutableIdentity,
    SessionRecord,
    SessionStore,
    SessionStoreError,
)
from tests.native_sessions.helpers import make_store, native_of

KEY = CompatibilityKey(
    conversation_id="conv-1",
    project_id="proj",
    canonical_cwd="/work/p",
    runtime_id="deepseek-harness",
    model_route="deepseek-official/deepseek-chat",
    executable_identity=ExecutableIdentity("/usr/bin/dsh", "0.1.2-rc.1"),
    tested_family="0.1.2-rc.1",
    protocol_generation="1",
    plugin_generation="g1",
    composition_generation="c1",
)


def record(conv: str = "conv-1", native: str = "sess-1") -> SessionRecord:
    key = CompatibilityKey(**{**KEY.__dict__, "conversation_id": conv})
    return SessionRecord(
        conversation_id=conv,
        runtime_id=key.runtime_id,
        resume_style=ResumeStyle.PROFILE_STDIO,
        native_id=native,
        compatibility=key,
        validated=True,
    )


texts = st.text(min_size=1, max_size=20)
optional = st.none() | texts

keys = st.builds(
    CompatibilityKey,
    conversation_id=texts,
    project_id=optional,
    canonical_cwd=texts,
    runtime_id=texts,
    model_route=texts,
    executable_identity=st.none() | st.builds(ExecutableIdentity, texts, optional),
    tested_family=optional,
    protocol_generation=optional,
    plugin_generation=optional,
    composition_generation=optional,
)


@pytest.mark.rule("SESSION-STORE-002")
@settings(max_examples=50)
@given(key=keys, native=texts, style=st.sampled_from(list(ResumeStyle)), validated=st.booleans())
def test_records_round_trip_through_the_file(
    tmp_path_factory: pytest.TempPathFactory,
    key: CompatibilityKey,
    native: str,
    style: ResumeStyle,
    validated: bool,
) -> None:
    store = SessionStore(tmp_path_factory.mktemp("rt") / "s.json", clock=lambda: 42.5)
    rec = SessionRecord(key.conversation_id, key.runtime_id, style, native, key, validated)
    stamped = store.put(rec)
    assert stamped.updated_at == 42.5
    again = SessionStore(store.path).get(key.conversation_id)
    assert again == stamped


@pytest.mark.rule("SESSION-STORE-002")
def test_file_holds_only_handle_style_and_key(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.put(record())
    data = json.loads(Path(store.path).read_text(encoding="utf-8"))
    assert data["version"] == STORE_FORMAT_VERSION
    entry = data["sessions"]["conv-1"]
    assert set(entry) == {
        "conversation_id",
        "runtime_id",
        "resume_style",
        "native_id",
        "compatibility",
        "validated",
        "updated_at",
    }
    assert entry["resume_style"] == "profile-stdio"
    assert entry["compatibility"]["executable_identity"] == {
        "path": "/usr/bin/dsh",
        "version": "0.1.2-rc.1",
    }


@pytest.mark.rule("SESSION-STORE-001")
def test_records_are_per_conversation_and_clear_is_targeted(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.put(record("a", "sa"))
    store.put(record("b", "sb"))
    store.put(record("a", "sa2"))
    assert {c: r.native_id for c, r in store.records().items()} == {"a": "sa2", "b": "sb"}
    assert store.clear("a", native_id="sa") is False, "another handle is not cleared"
    assert store.clear("a", native_id="sa2") is True
    assert store.get("a") is None and store.get("b") is not None
    assert store.clear("missing") is False


@pytest.mark.rule("SESSION-STORE-001")
def test_missing_file_is_empty_and_directories_are_created(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "deep" / "er" / "sessions.json")
    assert store.records() == {}
    store.put(record())
    assert Path(store.path).is_file()


@pytest.mark.rule("SESSION-STORE-001")
def test_a_failed_write_leaves_the_old_file_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = make_store(tmp_path)
    store.put(record("a", "old"))
    before = Path(store.path).read_bytes()

    def broken_replace(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError):
        store.put(record("a", "new"))
    monkeypatch.undo()
    assert Path(store.path).read_bytes() == before
    leftovers = [p for p in os.listdir(Path(store.path).parent) if p.endswith(".tmp")]
    assert leftovers == []
    assert native_of(store, "a") == "old"


@pytest.mark.rule("SESSION-STORE-001")
def test_concurrent_writers_do_not_lose_records(tmp_path: Path) -> None:
    path = tmp_path / "sessions.json"
    errors: list[BaseException] = []

    def writer(n: int) -> None:
        try:
            SessionStore(path).put(record(f"c{n}", f"s{n}"))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert sorted(SessionStore(path).records()) == sorted(f"c{n}" for n in range(16))


@pytest.mark.rule("SESSION-STORE-001")
@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("{not json", "not valid JSON"),
        ("[]", "top level must be an object"),
        ('{"version": 99, "sessions": {}}', "format version 99"),
        ('{"version": 1, "sessions": []}', "'sessions' must be an object"),
        ('{"version": 1, "sessions": {"c": {"conversation_id": "c"}}}', "sessions['c']"),
    ],
)
def test_malformed_store_is_a_typed_error(tmp_path: Path, content: str, problem: str) -> None:
    path = tmp_path / "sessions.json"
    path.write_text(content, encoding="utf-8")
    store = SessionStore(path)
    with pytest.raises(SessionStoreError) as info:
        store.get("c")
    assert problem in str(info.value)
    assert str(path) in str(info.value)
    assert info.value.rule == "SESSION-STORE-001"
    with pytest.raises(SessionStoreError):
        store.put(record("c"))
    assert path.read_text(encoding="utf-8") == content, "a bad file is never overwritten"


@pytest.mark.rule("SESSION-STORE-001")
def test_record_filed_under_another_conversation_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "sessions.json"
    payload = {"version": 1, "sessions": {"other": record("conv-1").to_json()}}
    path.write_text(json.dumps(payload), encoding="utf-8")
    with pytest.raises(SessionStoreError, match="does not match"):
        SessionStore(path).records()
