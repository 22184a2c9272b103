import sys
from pathlib import Path

# Tests import their shared model/oracle helpers as plain modules.
sys.path.insert(0, str(Path(__file__).parent))
