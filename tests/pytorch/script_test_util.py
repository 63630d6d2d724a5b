"""Shared by the tests that run npuscope, most of them on a Python script: the CLI, running a command,
and the script written once per test class into a temporary directory. No torch here: a test that only
drives the CLI does not import it."""
import os
import subprocess
import tempfile
import unittest

CLI = os.environ.get("NPUSCOPE_CLI", "npuscope")


def run_command(args, env=None):
    """Runs a command (npuscope, a script) with this test's environment plus `env`; its stdout. A failure
    raises AssertionError with both outputs."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    p = subprocess.run(args, capture_output=True, text=True, timeout=900, env=full_env)
    if p.returncode != 0:
        raise AssertionError("%s failed (%d):\n%s\n%s" % (args, p.returncode, p.stdout, p.stderr))
    return p.stdout


class ScriptTestCase(unittest.TestCase):
    """class T(ScriptTestCase, script=TEXT, name="train.py") writes TEXT as name into a temporary directory
    for the whole class: cls.dir (removed at the end) and cls.script (its path). A subclass that does more
    first calls super().setUpClass()."""

    def __init_subclass__(cls, script="", name="script.py", **kwargs):
        super().__init_subclass__(**kwargs)
        cls.script_text, cls.script_name = script, name

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        cls.script = os.path.join(cls.dir.name, cls.script_name)
        with open(cls.script, "w") as f:
            f.write(cls.script_text)

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    @classmethod
    def record(cls, trace_name, *flags, env=None):
        """`npuscope run -o DIR/trace_name FLAGS -- /usr/bin/python3 SCRIPT`: the trace's path and the output."""
        db = os.path.join(cls.dir.name, trace_name)
        return db, run_command([CLI, "run", "-o", db, *flags, "--", "/usr/bin/python3", cls.script], env)
