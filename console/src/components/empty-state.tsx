import type { ReactNode } from "react";

/** What a list shows when it has nothing yet: a title, what to do next, and an optional action. */
export function EmptyState({
  title,
  children,
  action,
}: {
  title: string;
  children?: ReactNode;
  action?: ReactNode;
}) {
  return (
    <section className="empty" aria-label={title}>
      <h3>{title}</h3>
      {children}
      {action && <div className="empty-action">{action}</div>}
    </section>
  );
}
