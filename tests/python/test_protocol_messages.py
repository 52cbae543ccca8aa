"""The worker protocol's messages (protocol.py's dataclasses, mirrored field for field by
src/runner/protocol.hpp: tests/unit/protocol_test.cpp compares the two): the workers' request
checks, the ops each worker serves, and a module both sides can import."""
import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kgym_worker import protocol

PYTHON_DIR = Path(__file__).resolve().parents[2] / "python"


def test_protocol_imports_nothing_heavy():
    code = ("import sys, kgym_worker.protocol as p; "
            "print(sorted(m for m in ('torch', 'numpy', 'kgym_worker.reference', 'kgym_worker.candidate') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(PYTHON_DIR)})
    assert out.stdout.strip() == "[]"


def test_every_served_op_has_a_request_dataclass():
    from kgym_worker import candidate, reference
    for op in protocol.REFERENCE_REQUESTS:
        assert callable(getattr(reference.ReferenceWorker, op)), op
    for op in protocol.CANDIDATE_REQUESTS:
        assert callable(getattr(candidate.CandidateExecutor, op)), op


def test_check_request_names_unknown_and_missing_fields():
    ok = {"op": "wall_output", "indices": [0, 1]}
    protocol.check_request(protocol.CANDIDATE_REQUESTS, ok)
    with pytest.raises(ValueError, match="fields the protocol does not know: bogus"):
        protocol.check_request(protocol.CANDIDATE_REQUESTS, {**ok, "bogus": 1})
    with pytest.raises(ValueError, match="lacks required fields: indices"):
        protocol.check_request(protocol.CANDIDATE_REQUESTS, {"op": "wall_output"})
    with pytest.raises(ValueError, match="unknown op"):
        protocol.check_request(protocol.CANDIDATE_REQUESTS, {"op": "load_task", "key": "k"})
    # Optional fields may be left out, or sent as null where the supervisor does (spot).
    protocol.check_request(protocol.REFERENCE_REQUESTS, {"op": "settle"})
    protocol.check_request(protocol.CANDIDATE_REQUESTS,
                           {"op": "time", "options": {}, "seeds": [], "keep": [], "spot": None,
                            "audit_dispatcher": False})


def test_schema_names_every_message_once():
    schema = protocol.schema()
    assert len(schema) == len(protocol.MESSAGES) >= 50
    assert schema["RunCaseReply"]["fields"]["*"] == {"type": "CaseRecord", "required": True}
    assert schema["CandidateTimeRequest"]["op"] == "time"
    assert schema["CandidateTimeRequest"]["fields"]["spot"] == {"type": "optional[SpotRequest]", "required": False}
    json.dumps(schema)
    for cls in protocol.MESSAGES:
        assert dataclasses.is_dataclass(cls)
