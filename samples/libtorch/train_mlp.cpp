// A libtorch training loop that records its own GPU memory history and writes it as a
// snapshot memscope opens: a 2-layer MLP, Adam, a few steps, then
// torch::cuda::_memory_snapshot_pickled().
//
//   libtorch_train_mlp [OUT.pickle] [STEPS]
#include <torch/csrc/cuda/memory_snapshot.h>
#include <torch/torch.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>

int main(int argc, char** argv)
{
    const std::string out = argc > 1 ? argv[1] : "libtorch_mlp.pickle";
    const int steps = argc > 2 ? std::atoi(argv[2]) : 3;
    if (!torch::cuda::is_available()) {
        std::cerr << "libtorch_train_mlp: no CUDA device\n";
        return 1;
    }
    // enabled="all", context="all", stacks="all" (C++ frames; there is no Python here)
    torch::cuda::_record_memory_history(std::optional<std::string>("all"), std::optional<std::string>("all"), std::string("all"),
                                        size_t(100000));

    const torch::Device device(torch::kCUDA);
    torch::nn::Sequential model(torch::nn::Linear(1024, 4096), torch::nn::ReLU(), torch::nn::Linear(4096, 10));
    model->to(device);
    torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-3));
    for (int step = 0; step < steps; ++step) {
        auto x = torch::randn({256, 1024}, device);
        auto y = torch::randint(0, 10, {256}, torch::TensorOptions().device(device).dtype(torch::kLong));
        auto loss = torch::nn::functional::cross_entropy(model->forward(x), y);
        optimizer.zero_grad();
        loss.backward();
        optimizer.step();
        std::printf("step %d loss %.4f\n", step, loss.item<float>());
    }
    torch::cuda::synchronize();
    const std::string pickled = torch::cuda::_memory_snapshot_pickled();
    std::ofstream(out, std::ios::binary).write(pickled.data(), static_cast<std::streamsize>(pickled.size()));
    std::printf("wrote %s (%zu bytes)\n", out.c_str(), pickled.size());
    return 0;
}
