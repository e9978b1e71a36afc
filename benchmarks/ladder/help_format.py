"""The --help layout the benchmark scripts share."""
from __future__ import annotations

import argparse
from pathlib import Path


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows a default only where there is one to show (not None, not a flag's False)."""

    def _get_help_string(self, action):
        default = action.default
        if default is None or default is False or isinstance(default, (tuple, Path)):
            return action.help
        return super()._get_help_string(action)
