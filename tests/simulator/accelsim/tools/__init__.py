"""Fakes of the external tools (fpgaconf, xbmgmt, nvidia-smi, mdevctl, sriov-manage, ip)."""


def run_tool(name, args, root=None, state_dir=None):
    """Run a tool fake in-process; returns (rc, stdout, stderr)."""
    import contextlib
    import io
    from .main import main
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(name, list(args), root=root, state_dir=state_dir)
    return rc, out.getvalue(), err.getvalue()
