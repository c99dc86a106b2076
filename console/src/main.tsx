import { TransportProvider } from "@connectrpc/connect-query";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./App.tsx";
import { needsToken } from "./errors.ts";
import "./styles.css";
import { consoleTransport } from "./transport.ts";

const queryClient = new QueryClient({
  defaultOptions: {
    // A missing token is answered at once by asking for it; other failures get one more try.
    queries: { retry: (failures, error) => !needsToken(error) && failures < 1, refetchOnWindowFocus: false },
  },
});

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <TransportProvider transport={consoleTransport()}>
      <QueryClientProvider client={queryClient}>
        <App />
      </QueryClientProvider>
    </TransportProvider>
  </StrictMode>,
);
