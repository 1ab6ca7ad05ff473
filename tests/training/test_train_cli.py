"""engine-train as a user meets it before installing the `train` extra."""
import subprocess
import sys

import pytest

# Runs training.cli.main with every `torch` import failing, as in an install without the extra.
WITHOUT_TORCH = """
import sys

class NoTorch:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "torch":
            raise ModuleNotFoundError("No module named %r" % name, name=name)
        return None

sys.meta_path.insert(0, NoTorch())
from goengine.training.cli import main
main(sys.argv[1:])
"""


@pytest.mark.parametrize("args", [["--help"], ["sl", "--help"]])
def test_without_the_train_extra_says_what_to_install(args):
    p = subprocess.run([sys.executable, "-c", WITHOUT_TORCH, *args], capture_output=True,
                       text=True, timeout=300)
    assert p.returncode != 0
    assert "Traceback" not in p.stderr
    assert "pip install 'goengine[train]'" in p.stderr and "pip install '.[train]'" in p.stderr
    assert "torch" in p.stderr
