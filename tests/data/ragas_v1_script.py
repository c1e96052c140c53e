# A ragas 0.1 evaluation script as ragas users write it (the shape of the quick-start
# that a Japanese RAGAS article runs), with its own data. tests/model/test_ragas_compat.py
# changes ONLY the import lines (`ragas` -> `localeval.ragas`) and runs it offline;
# the API key line stays and is never read.
import os

os.environ["OPENAI_API_KEY"] = "sk-not-a-real-key"

from datasets import Dataset

from ragas import evaluate
from ragas.metrics import faithfulness, answer_relevancy, context_recall, context_precision, context_utilization, answer_similarity, answer_correctness


data_samples = {
    "question": ["How tall is Mount Fuji?", "富士山はどこにありますか？"],
    "answer": ["Mount Fuji is 3,776 metres tall.", "富士山は静岡県と山梨県の境にあります。"],
    "contexts": [["Mount Fuji, at 3,776 m, is the highest mountain in Japan."],
                 ["富士山は静岡県と山梨県にまたがる活火山である。", "標高は3776メートル。"]],
    "ground_truth": ["Mount Fuji is 3,776 m high.", "静岡県と山梨県の県境にある。"],
}

dataset = Dataset.from_dict(data_samples)

result = evaluate(dataset, [faithfulness, answer_relevancy, context_recall, context_precision, context_utilization, answer_similarity, answer_correctness])
print(result)
