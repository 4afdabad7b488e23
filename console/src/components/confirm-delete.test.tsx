import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { Code, WharfApiError } from "wharf/sdk";
import { ConfirmDelete } from "./confirm-delete";

describe("ConfirmDelete", () => {
  afterEach(cleanup);

  function setup(onConfirm: () => Promise<unknown>) {
    const calls = { confirmed: 0, deleted: 0 };
    render(
      <ConfirmDelete
        what="identity ci"
        onConfirm={() => {
          calls.confirmed++;
          return onConfirm();
        }}
        onDeleted={() => calls.deleted++}
      />,
    );
    return calls;
  }

  it("asks first, with the focus on Cancel; Cancel and Escape delete nothing", () => {
    const calls = setup(async () => undefined);
    fireEvent.click(screen.getByRole("button", { name: "Delete identity ci" }));
    const question = screen.getByRole("alertdialog", { name: "Confirm: delete identity ci" });
    expect(question.textContent).toContain("Delete identity ci?");
    expect(document.activeElement?.textContent).toBe("Cancel");
    fireEvent.click(screen.getByRole("button", { name: "Cancel" }));
    fireEvent.click(screen.getByRole("button", { name: "Delete identity ci" }));
    fireEvent.keyDown(screen.getByRole("alertdialog"), { key: "Escape" });
    expect(screen.queryByRole("alertdialog")).toBeNull();
    expect(calls).toEqual({ confirmed: 0, deleted: 0 });
  });

  it("gives the focus back to the Delete button when Escape or Cancel closes the question", async () => {
    setup(async () => undefined);
    fireEvent.click(screen.getByRole("button", { name: "Delete identity ci" }));
    fireEvent.keyDown(screen.getByRole("alertdialog"), { key: "Escape" });
    await waitFor(() =>
      expect(document.activeElement).toBe(screen.getByRole("button", { name: "Delete identity ci" })),
    );
    fireEvent.click(screen.getByRole("button", { name: "Delete identity ci" }));
    fireEvent.click(screen.getByRole("button", { name: "Cancel" }));
    await waitFor(() =>
      expect(document.activeElement).toBe(screen.getByRole("button", { name: "Delete identity ci" })),
    );
  });

  it("keeps Tab and Shift+Tab within the question while it is open", () => {
    setup(async () => undefined);
    fireEvent.click(screen.getByRole("button", { name: "Delete identity ci" }));
    const question = screen.getByRole("alertdialog");
    const [cancel, yes] = [
      screen.getByRole("button", { name: "Cancel" }),
      screen.getByRole("button", { name: "Yes, delete" }),
    ];
    yes.focus();
    fireEvent.keyDown(question, { key: "Tab" });
    expect(document.activeElement).toBe(cancel);
    fireEvent.keyDown(question, { key: "Tab", shiftKey: true });
    expect(document.activeElement).toBe(yes);
  });

  it("deletes once confirmed and reports it", async () => {
    const calls = setup(async () => undefined);
    fireEvent.click(screen.getByRole("button", { name: "Delete identity ci" }));
    fireEvent.click(screen.getByRole("button", { name: "Yes, delete" }));
    await waitFor(() => expect(calls).toEqual({ confirmed: 1, deleted: 1 }));
    expect(screen.queryByRole("alertdialog")).toBeNull();
  });

  it("shows the server's refusal in place and keeps the question open", async () => {
    const calls = setup(async () => {
      throw new WharfApiError({
        code: Code.FailedPrecondition,
        message: "role bindings reference the identity",
      });
    });
    fireEvent.click(screen.getByRole("button", { name: "Delete identity ci" }));
    fireEvent.click(screen.getByRole("button", { name: "Yes, delete" }));
    const alert = await screen.findByRole("alert");
    expect(alert.textContent).toContain("FAILED_PRECONDITION");
    expect(alert.textContent).toContain("role bindings reference the identity");
    expect(calls).toEqual({ confirmed: 1, deleted: 0 });
    await waitFor(() => expect(document.activeElement?.textContent).toBe("Cancel"));
  });
});
