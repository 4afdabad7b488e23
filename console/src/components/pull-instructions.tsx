import { CopyButton } from "./copy-button";

/** How to pull `reference` (`host/org/repo:tag` or `…@sha256:…`) with docker, podman and skopeo. */
export function PullInstructions({ reference }: { reference: string }) {
  const commands = [
    { tool: "docker", command: `docker pull ${reference}` },
    { tool: "podman", command: `podman pull ${reference}` },
    { tool: "skopeo", command: `skopeo copy docker://${reference} oci:image` },
  ];
  return (
    <section aria-labelledby="pull-heading">
      <h2 id="pull-heading">Pull</h2>
      <p className="muted">
        Sign in first with <code>wharf auth configure-docker</code> (docker, podman and skopeo then use your
        login).
      </p>
      {commands.map((c) => (
        <div key={c.tool}>
          <div className="record-line">
            <strong>{c.tool}</strong>
            <CopyButton text={c.command} label={`Copy the ${c.tool} command`} />
          </div>
          <pre className="command">
            <code>{c.command}</code>
          </pre>
        </div>
      ))}
    </section>
  );
}
