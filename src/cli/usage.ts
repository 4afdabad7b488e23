// The usage lines of the `wharf` commands whose modules load the server's code (stores, drivers,
// clients): kept apart from them so that printing help loads none of it (main.ts imports those
// modules only to run a command).

/** Usage lines of `wharf admin token`. */
export const ADMIN_TOKEN_USAGE = `  wharf admin token [--ttl 1h] [--audience api|registry|<url>] [options]
                                        print a token of the built-in platform administrator
                                        (--ttl at most 24h; signed for the URLs the server recorded)
`;

/** Usage lines of `wharf admin keys`. */
export const ADMIN_KEYS_USAGE = `  wharf admin keys rotate [options]
                                        make a new issuer signing key current (every server within
                                        seconds); replaced keys verify until their tokens expire
  wharf admin keys list [options]       the issuer's signing keys: kid, created, state, retire time
`;

/** Usage lines of `wharf admin tokens`. */
export const ADMIN_TOKENS_USAGE = `  wharf admin tokens revoke [--subject S] [--issued-before TIME] [options]
                                        withdraw tokens within seconds on every server: S's tokens
                                        issued until now (S may get new ones), or every token (of S)
                                        with iat before TIME (RFC 3339, not in the future)
`;

/** Usage lines of `wharf auth pull-token create` and `revoke`. */
export const PULL_TOKEN_USAGE = `  wharf auth pull-token create --parent ORG [--ttl 720h] [--name NAME] [--api-url URL] [--token TOKEN]
                                        create registry pull credentials for ORG (token: --token or WHARF_TOKEN)
  wharf auth pull-token revoke --identity UID [--api-url URL] [--token TOKEN]
                                        revoke them: delete the identity's role bindings, then the identity
`;

/** Usage of `wharf import vulnreport` (a kind of `wharf import`; see import-vulnreport.ts). */
export const IMPORT_VULNREPORT_USAGE = `  wharf import vulnreport --repo ORG/REPO --digest DIGEST FILE [--api-url URL] [--token TOKEN]
                                        upload a Grype, Trivy or cosign-vuln JSON report of an image
                                        (token: --token, WHARF_TOKEN, else the stored login)
`;

/** Usage lines of the client commands (src/cli/client/, each with its own --help). */
export const CLIENT_USAGE = `  wharf iam organizations|folders|identities|roles|role-bindings|identity-providers|invites …
  wharf iam account-associations|group-role-mappings|terms …
                                        identity and access (wharf iam --help)
  wharf images repos|tags|history|describe|diff …
                                        repositories, tags, tag history, images (wharf images --help)
  wharf libraries list|versions|count   language libraries
  wharf vulns report IMAGE              an image's vulnerability report (wharf vulns report --help)
  wharf advisories list|describe        imported security advisories
  wharf events subscriptions|deliveries …
                                        webhook subscriptions and their deliveries
  wharf auth status | token --audience registry | configure-docker | pull-token list|delete
                                        who you are; tokens; docker-credential-wharf; pull tokens
  wharf completion bash|zsh             a shell completion script
`;
