import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./app";
import { RouterProvider } from "./lib/router";
import { WharfProvider } from "./lib/wharf-context";
import "./styles.css";

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <RouterProvider>
      <WharfProvider apiUrl={window.location.origin}>
        <App />
      </WharfProvider>
    </RouterProvider>
  </StrictMode>,
);
