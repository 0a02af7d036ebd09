"""p2pkoikoi: peer-to-peer Koi-Koi for the terminal.

Layers, each importing only the ones below it:

1. :mod:`p2pkoikoi.engine`    -- cards, rules, yaku, deal, round and match state machine (stdlib only)
2. :mod:`p2pkoikoi.session`   -- the wire protocol as a sans-I/O state machine
3. :mod:`p2pkoikoi.transport` -- trio streams, timeouts, the one writer task
4. :mod:`p2pkoikoi.ui` and :mod:`p2pkoikoi.cli` -- the prompt_toolkit table and the command line

:mod:`p2pkoikoi.bots` sits beside the interface and uses only the engine and a player's view.

Modules that need :mod:`typing` for annotations only write ``TYPE_CHECKING = False``
and import under ``if TYPE_CHECKING:``: type checkers treat any ``TYPE_CHECKING`` as
true, and the commands that load only the engine and the command line (``score``,
``rules``, ``verify``, ``--help``) then start without importing :mod:`typing` (and
the :mod:`re` it brings), which keeps them within three times ``python -c pass``
(``p2pkoikoi bench``).
"""

# The one place the version is written: pyproject.toml reads it from here
# ([tool.setuptools.dynamic]), so ``--version`` and the ``hello`` message say the
# same as the package metadata, installed or run from a checkout.
__version__ = "0.2.0"

#: The project's home.  Help texts and screens point at documents there: an
#: installed copy (a wheel, pipx, uv tool) has no docs/ folder on disk.
HOME_URL = "https://github.com/p2pkoikoi/p2pkoikoi"


def doc_url(path: str) -> str:
    """The web address of the repository file ``path`` on the main branch,
    e.g. ``doc_url("docs/network.md#records")``."""
    return f"{HOME_URL}/blob/main/{path}"
