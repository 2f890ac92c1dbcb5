"""The paper's experiments with real generators: report generation under three strategies, regenerated RAG."""
