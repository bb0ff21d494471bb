// The CIFAR-10 seed's network as it is written today: BatchNormalization after each convolution and
// GlobalAveragePooling2D in place of Flatten and the wide Dense (66,986 parameters instead of
// 1,250,858), on 8 replicas. Pixels scaled to [0, 1], labels through to_categorical, Adam, categorical
// crossentropy and accuracy, batch 128 (each replica normalises a micro-batch of 16), 30 epochs.
//
//   cifar10_bn [--epochs 30] [--batch 128] [--steps N] [--data DIR] [--seed S] [--train-samples N]
//              [--strategy one|tpu8|multiworker] [--save-weights PATH] [--load-weights PATH]
//              [--backup-dir DIR]
//              [--tensorboard DIR] [--plot FILE.svg]
//
// The flags are the CIFAR-10 seed's (see cifar10_cnn/main.cpp). The data is CIFAR-10's binary version
// in DIR ($TPUDSL_CIFAR10_DIR, else ./cifar-10-batches-bin); without it the program trains on a
// synthetic stand-in (5,000 training and 1,000 test images), and says so on its first line.
#include "common/args.hpp"
#include "common/data.hpp"
#include "common/persistence.hpp"
#include "common/strategy.hpp"
#include "common/synthetic.hpp"
#include "model.hpp"

#include <tpudsl/tpudsl.hpp>

#include <cstdio>
#include <exception>
#include <iostream>

int
main(int argc, char** argv)
try {
    const auto args =
        seeds::parse_args(argc, argv, {.epochs = 30, .batch = 128, .data = tpudsl::data::cifar10::default_directory()});
    const auto data = seeds::load_or_stand_in(
        "CIFAR-10", [&] { return tpudsl::data::cifar10::load_data(args.data); },
        [] { return tpudsl::data::image_dataset{seeds::synthetic_images(5000, 32, 32, 3, 1),
                                                seeds::synthetic_images(1000, 32, 32, 3, 2)}; });
    const auto x_train = data.train.x<32, 32, 3>({.limit = args.train_samples});
    const auto y_train = tpudsl::to_categorical<10>(data.train.y(args.train_samples));
    const auto x_test = data.test.x<32, 32, 3>();
    const auto y_test = tpudsl::to_categorical<10>(data.test.y());

    // [cifar_bn_training]
    return seeds::with_strategy(args, [&](auto& strategy) {   // --strategy one|tpu8|multiworker
        auto model = strategy.template scope<seeds::Cifar10Bn>(args.seed);
        model.summary();   // Total 66,986: 66,602 trainable, 384 non-trainable (the moving statistics)
        model.compile(tpudsl::optimizers::Adam{}, tpudsl::losses::CategoricalCrossentropy{},
                      tpudsl::metrics::CategoricalAccuracy{});
        seeds::load_weights(model, strategy, args);   // --load-weights
        if (args.epochs > 0)                          // --epochs 0: no training; the weights as loaded are evaluated
            model.fit(x_train, y_train,
                      {.batch_size = args.batch, .epochs = args.epochs, .steps_per_epoch = args.steps,
                       .validation_data = tpudsl::validation_data(x_test, y_test),
                       .callbacks = seeds::callbacks(args, model)});
        // Inference normalises with the moving statistics.
        const auto scores = model.evaluate(x_test, y_test, {.batch_size = 256, .verbose = 0});
        return seeds::finish(model, strategy, args, scores);   // the chief saves and reports
    });
    // [cifar_bn_training]
} catch (const std::exception& e) {
    std::cerr << "cifar10_bn: " << e.what() << '\n';
    return 1;
}
